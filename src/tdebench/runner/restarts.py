"""Restart every twin's server before every measured block, keeping its cache (``--restart-twins``).

Two identical plain MariaDB twins differ by a few percent per query and about 1% in total for as long as their
server processes live, and by a different amount after a restart (docs/precision.md: per-query differences before
and after restarting both correlated 0.04). It is an effect of the process (where its memory landed), not of the
data or the configuration, so a comparison inside one pair of processes cannot average it out, however many blocks
it runs; and a twin restarted on its own keeps much of it (the first-created twin stayed about 1% slower). Restarting
every twin before every block, all stopped before any starts, draws it afresh, so it becomes part of the
block-to-block variance the interval already covers. Every server notes the pages it has cached
(:meth:`tdebench.api.cache.WarmCache.save` of :meth:`tdebench.api.engine.Instance.cache`), all stop, all start again, each in a fresh random order, and
all get their pages back at once (:meth:`~tdebench.api.cache.WarmCache.load`, one thread per twin) before the block
starts, so a warm-cache run stays warm and the twins' caches fill the same stretch of memory; then the servers must go quiet again (:func:`tdebench.runner.settle.wait_quiet`). Between the starts
and the loads, the OS page cache's copy of every twin's data is filled again, all twins' at once, where their
caches ask for it (:func:`refill_os_caches`, ``--page-source memory``).

Default: on with ``--schedule query`` or ``duet`` and a warm cache when every engine of the run can restart keeping
its cache (:attr:`tdebench.api.engine.Engine.warm_restart`); the manifest's ``restarts`` says whether, why, and per block
what each restart took (per config ``stop_wall_s``, ``start_wall_s``, ``load_wall_s``).
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

from tdebench.api.cache import CacheNotRestorable, WarmCache, public
from tdebench.api.engine import Engine
from tdebench.api.events import RunListener
from tdebench.api.plan import Block, RunPlan
from tdebench.api.trial import ConfigState
from tdebench.encryption import redact
from tdebench.engines.toolkit import pagecache
from tdebench.errors import UsageError
from tdebench.runner.settle import local_servers, wait_quiet


COLD_TEXT = ("from now on every server restarts before every measured block with an empty cache, so that the "
             "server processes are still drawn afresh and every twin starts the block from the same (cold) state")


def unable(plan: RunPlan, engines: dict[str, Engine]) -> list[str]:
    """The engines of the run that cannot restart keeping their cache."""
    return sorted({c.engine for c in plan.configs if not engines[c.engine].warm_restart})


def decide(plan: RunPlan, engines: dict[str, Engine]) -> tuple[bool, str]:
    """Whether twins restart before every block, and why; a UsageError for an explicit request that cannot be
    met (checked before any work)."""
    cannot = unable(plan, engines)
    if plan.restart_twins:
        if cannot:
            raise UsageError(f"--restart-twins: {', '.join(cannot)} cannot restart keeping its cache (embedded "
                             "engines have no server process; external servers are not tdebench's to restart)",
                             "leave --restart-twins out")
        return True, "asked for (--restart-twins)"
    if plan.restart_twins is False:
        return False, "turned off (--no-restart-twins)"
    if plan.cache != "warm" or plan.schedule not in ("query", "duet", "turns"):
        return False, "off by default outside --schedule query, duet or turns with a warm cache"
    if cannot:
        return False, f"{', '.join(cannot)} cannot restart keeping its cache"
    return True, f"default with --schedule {plan.schedule} and a warm cache"


def warm_cache(state: ConfigState) -> WarmCache:
    """The cache of ``state``'s instance that a restart keeps (:func:`decide` turns restarts on only for those)."""
    cache = state.instance.cache()
    if not isinstance(cache, WarmCache):
        raise UsageError(f"{state.label} cannot restart keeping its cache", "leave --restart-twins out")
    return cache


class TwinRestarts:
    """Restarts the live twins before every measured block and records what each restart took."""

    def __init__(self, plan: RunPlan, engines: dict[str, Engine], manifest: dict[str, Any]) -> None:
        self.on, reason = decide(plan, engines)
        self.cold = False  # a cache that cannot be given back: restart anyway, every twin with an empty cache
        self.seed = plan.seed
        self.entry = manifest.setdefault("restarts", {})
        self.entry.update(every_block=self.on, reason=reason)
        self.entry.setdefault("blocks", {})

    def _go_cold(self, block: Block, reason: str, ui: RunListener) -> None:
        """A cache holds part of an index (a memory regime smaller than the data): it cannot be given back as it
        was, but stopping the restarts would bring back the process placement bias they remove; restart cold."""
        self.cold = True
        self.entry["cold"] = {"from_block": block.number, "reason": reason, "what": COLD_TEXT}
        ui.message(f"{reason}: {COLD_TEXT}")

    def before(self, block: Block, states: list[ConfigState], ui: RunListener) -> None:
        """Restart ``states`` (the block's pending configs) before a measured block; nothing for a warm-up.

        All servers stop before any starts again, in fresh random orders: a server restarted on its own gets
        back much of the memory it just freed, so its twin would keep the placement it was created with."""
        if not self.on or block.warmup or not states:
            return
        if not self.entry["blocks"]:
            ui.message("every server restarts before every measured block, keeping its cache "
                       "(--restart-twins; docs/precision.md)")
        started = time.monotonic()
        rng = random.Random(f"{self.seed}:{block.number}:restarts")
        saved: dict[str, dict[str, Any]] = {}
        facts: dict[str, Any] = {}
        for state in states:
            if self.cold:
                facts[state.label] = {"cold": True}
                continue
            try:
                saved[state.label] = warm_cache(state).save()
                facts[state.label] = public(saved[state.label])
            except CacheNotRestorable as exc:  # nothing was stopped yet: from now on every twin restarts cold
                self._go_cold(block, str(exc), ui)
                return self.before(block, states, ui)
            except Exception as exc:  # noqa: BLE001 - e.g. a server that died: its trial fails and is recovered
                facts[state.label] = {"error": f"save: {redact(str(exc))[:300]}"}
                ui.message(f"restart of {state.label} failed (save): {redact(str(exc))[:200]}")
        stops, starts = rng.sample(states, len(states)), rng.sample(states, len(states))
        self._each("stop", stops, facts, saved, ui)
        self._each("start", starts, facts, saved, ui)
        refill_os_caches([s for s in starts if "error" not in facts[s.label]], facts)
        self._load_together(starts, facts, saved, ui)
        local = local_servers([s for s in states if "error" not in facts[s.label]])
        quiet = wait_quiet(local, RunListener()) if local else {}  # recorded, not said at every block
        for label, q in quiet.items():
            facts[label]["quiet_waited_s"] = q["quiet_waited_s"]
        facts["seconds"] = round(time.monotonic() - started, 3)
        facts["stop_order"] = [s.label for s in stops]
        facts["start_order"] = [s.label for s in starts]
        self.entry["blocks"][str(block.number)] = facts

    def _load_together(self, order: list[ConfigState], facts: dict[str, Any], saved: dict[str, dict[str, Any]],
                       ui: RunListener) -> None:
        """Every twin gets its pages back at the same time, one thread each: a server's cache takes its memory as
        it fills, and twins filled one after the other would each take a stretch of their own (the reason the OS
        page cache is refilled together, :func:`refill_os_caches`)."""
        threads = [threading.Thread(target=self._each, args=("load", [state], facts, saved, ui),
                                    name=f"tdebench-load-{state.label}", daemon=True) for state in order]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _each(self, step: str, order: list[ConfigState], facts: dict[str, Any], saved: dict[str, dict[str, Any]],
              ui: RunListener) -> None:
        """One step of the restart (stop, start or load) for every config in ``order`` that has not failed."""
        for state in order:
            if "error" in facts[state.label]:
                continue
            began = time.monotonic()
            try:
                if step == "load":
                    if not self.cold:
                        facts[state.label].update(warm_cache(state).load(saved[state.label]))
                elif step == "stop":
                    state.instance.stop()
                else:
                    state.instance.start()  # a key server's config fetches its keys here
                facts[state.label][f"{step}_wall_s"] = round(time.monotonic() - began, 3)
            except Exception as exc:  # noqa: BLE001 - its trial fails next and is recovered like any other
                facts[state.label]["error"] = f"{step}: {redact(str(exc))[:300]}"
                ui.message(f"restart of {state.label} failed ({step}): {redact(str(exc))[:200]}")


def refill_os_caches(started: list[ConfigState], facts: dict[str, Any]) -> None:
    """With every server started, before any gets its cache back (an encrypted filesystem is readable only while
    mounted, and unlocked): the OS page cache's copy of the data of each twin whose cache asks for it
    (:meth:`tdebench.api.cache.Cache.os_cache_files`, ``--page-source memory``) dropped and read back, every twin's
    in turn, so that no twin's misses are served from memory the others' are not (:mod:`~tdebench.engines.toolkit.
    pagecache`); what each got is recorded with its restart."""
    wanted: list[tuple[str, tuple[Path, Path]]] = []
    for state in started:
        cache = state.instance.cache()
        files = cache.os_cache_files() if cache is not None else None
        if files is not None:
            wanted.append((state.label, files))
    if not wanted:
        return
    began = time.monotonic()
    for (label, _), filled in zip(wanted, pagecache.refill_together([files for _, files in wanted])):
        facts[label].update(filled)
    facts["page_cache_refill_s"] = round(time.monotonic() - began, 3)
