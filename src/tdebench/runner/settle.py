"""Before the first block: twins with comparable background work, optionally pinned to fixed cores.

1. Each instance's own background work (:meth:`~tdebench.api.engine.Instance.background_work`, e.g. MariaDB's
   encryption threads still encrypting tablespaces after the load) must be done, up to :data:`WORK_LIMIT` s.
2. Every local server must be quiet: its process tree below :data:`QUIET_CORES` of a core over a
   :data:`QUIET_WINDOW` s window (purge, page flushing and statistics after a load), up to :data:`QUIET_LIMIT` s.
3. ``--pin``: the client (tdebench) on a CPU that does not take the data disk's interrupts (else CPU 0), every
   server on the other CPUs; ``--nice N``: all of them at nice N
   (:mod:`tdebench.runner.pinning`).

What was waited for, for how long, and the CPU each server was left using are recorded in the manifest
(``settle``); a limit that runs out is said, not fatal.
"""

from __future__ import annotations

import os
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.trial import ConfigState
from tdebench.encryption import redact
from tdebench.measure.proctime import TreeCpu
from tdebench.runner import pinning

WORK_LIMIT = 300.0
QUIET_CORES = 0.05
QUIET_WINDOW = 2.0
QUIET_LIMIT = 60.0


def _background(state: ConfigState, ui: RunListener) -> dict[str, Any]:
    started = time.monotonic()
    seen: list[str] = []
    while True:
        try:
            work = state.instance.background_work()
        except Exception as exc:  # noqa: BLE001 - a status that cannot be read is recorded, not fatal
            return {"error": redact(str(exc))[:300], "waited_s": round(time.monotonic() - started, 1)}
        if not work:
            return {"pending": seen, "waited_s": round(time.monotonic() - started, 1), "done": True}
        if not seen:
            ui.message(f"waiting for {state.label}'s background work: {'; '.join(work)}")
        seen = work
        if time.monotonic() - started > WORK_LIMIT:
            ui.message(f"{state.label}: background work still going after {WORK_LIMIT:.0f} s; measuring anyway")
            return {"pending": work, "waited_s": round(time.monotonic() - started, 1), "done": False}
        time.sleep(1.0)


def wait_quiet(states: list[ConfigState], ui: RunListener) -> dict[str, dict[str, Any]]:
    """Wait until every local server uses less than QUIET_CORES of a core over a window."""
    trees = {s.label: TreeCpu(s.instance.server_pids) for s in states}
    started = time.monotonic()
    out: dict[str, dict[str, Any]] = {}
    said = False
    while True:
        before = {label: t.read() for label, t in trees.items()}
        time.sleep(QUIET_WINDOW)
        cores = {label: t.seconds_between(before[label], t.read()) / QUIET_WINDOW for label, t in trees.items()}
        waited = time.monotonic() - started
        busy = {label: c for label, c in cores.items() if c >= QUIET_CORES}
        if not busy or waited > QUIET_LIMIT:
            for label, c in cores.items():
                out[label] = {"server_cores": round(c, 4), "quiet_waited_s": round(waited, 1),
                              "quiet": c < QUIET_CORES}
            if busy:
                ui.message(f"servers still busy after {QUIET_LIMIT:.0f} s: " + ", ".join(
                    f"{label} {c:.2f} cores" for label, c in busy.items()) + "; measuring anyway")
            return out
        if not said:
            ui.message("waiting for the servers to go quiet: " + ", ".join(
                f"{label} {c:.2f} cores" for label, c in busy.items()))
            said = True


def settle(plan: RunPlan, states: dict[str, ConfigState], ui: RunListener, stack: ExitStack,
           data_dir: Path | None = None) -> dict[str, Any]:
    """Make the twins' starting points comparable (and pin them with ``--pin``, the servers with the interrupts of
    ``data_dir``'s disk); what was done, for the manifest."""
    live = [s for s in states.values() if not s.abandoned]
    out: dict[str, Any] = {"configs": {s.label: _background(s, ui) for s in live}}
    local = local_servers(live)
    if local:
        for label, facts in wait_quiet(local, ui).items():
            out["configs"][label].update(facts)
    if plan.pin:
        pin = out["pin"] = pinning.pin_run(live, stack, data_dir)
        pin["reason"] = plan.pin_reason or "asked for (--pin)"
        disk = pin.get("disk_interrupts")
        where = f" (with {disk['device']}'s interrupts)" if disk and set(disk["cpus"]) <= set(pin["servers"]) else ""
        ui.message(f"pinned: tdebench on CPU {pin['client']}, servers on CPU {pin['servers']}{where} "
                   f"({pin['reason']}; --no-pin to leave them free)")
    if plan.nice is not None:
        out["nice"] = pinning.renice_run(live, plan.nice, stack)
        ui.message(f"tdebench and the servers run at nice {plan.nice}")
    return out


def local_servers(states: list[ConfigState]) -> list[ConfigState]:
    """The states whose server tdebench started and can watch: not an external target, not an engine running
    inside tdebench's own process."""
    return [s for s in states if s.instance.scannable and os.getpid() not in _pids(s)]


def _pids(state: ConfigState) -> list[int]:
    try:
        return list(state.instance.server_pids())
    except Exception:  # noqa: BLE001
        return []
