"""The memory sweep (``--memory-ratio``): size every instance's cache from the loaded data, ratio by ratio.

The plan's blocks run ratio after ratio (:meth:`tdebench.api.plan.RunPlan.blocks`), each ratio with its own warm-up
block. Before a config's first trial at a ratio, its instance's cache is set to ``ratio × data`` bytes
(:meth:`tdebench.api.cache.Cache.resize` of :meth:`tdebench.api.engine.Instance.cache`, a restart for servers), where ``data`` is the loaded data of
the engine's plain twin (tables and indexes as its catalog reports them, else its files), measured once per engine:
every twin at a ratio gets the same number of bytes. Rows measured at a ratio carry the regime label
(``mariadb-none@mem0.25``, :mod:`tdebench.api.regime`); the manifest gets one ``configs`` entry per regime label
with the settings it ran with, and ``memory`` with the data sizes and ratios.

Memory: every instance keeps its cache while the others run, so the largest ratio × data, summed over the
configs (plus PostgreSQL's headroom), must fit in :data:`MEMORY_SHARE` of the machine's memory. That is checked
before any work from the workload's input size and the engines' measured disk footprints, and again with the
real data sizes before the first trial.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import psutil

from tdebench.api.engine import Engine
from tdebench.api.plan import Block, RunPlan
from tdebench.api.regime import loaded_bytes, ratio_text, regime_label
from tdebench.api.trial import ConfigState, Recorder
from tdebench.errors import EnvironmentProblem, UsageError

#: the share of the machine's memory the swept caches may take together
MEMORY_SHARE = 0.8
GIB = 1024 ** 3


def _gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


def _size(n: float) -> str:
    for unit, size in (("GiB", GIB), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


class MemoryRegimes:
    """What the orchestrator asks about the memory sweep (everything is a no-op without ``--memory-ratio``)."""

    def __init__(self, plan: RunPlan, total_memory: int | None = None) -> None:
        self.plan = plan
        self.ratios = plan.memory_ratios
        self.total_memory = total_memory or psutil.virtual_memory().total
        self.current: dict[str, float] = {}
        self.engines: dict[str, Engine] = {}  # the plan's engines by name, as met

    @property
    def active(self) -> bool:
        return bool(self.ratios)

    # before any work ------------------------------------------------------------------------------------------
    def check_before_work(self, engines: dict[str, Engine], input_bytes: int | None) -> None:
        """UsageError for an engine without a cache to size; EnvironmentProblem when the largest ratio cannot fit
        in memory even by the estimate from the input size."""
        if not self.active:
            return
        self.engines.update(engines)
        for name, engine in engines.items():
            if not engine.cache_setting or engine.remote:
                raise UsageError(f"--memory-ratio: engine '{name}' has no cache size tdebench can set",
                                 "leave out --memory-ratio (it sweeps sqlite, mariadb and postgres caches)")
            source = self.plan.page_source
            if source and source not in engine.page_sources:
                where = " or ".join(engine.page_sources) or "where the engine decides"
                raise UsageError(f"--page-source {source}: the pages {name}'s cache misses come from {where} only",
                                 "leave out --page-source" + (f" (or run {name} on its own with --page-source "
                                                              f"{engine.page_sources[0]})" if engine.page_sources
                                                              else ""))
        if not input_bytes:
            return
        estimate = {c.label: engines[c.engine].disk_footprint(c.spec, c.settings).final * input_bytes
                    for c in self.plan.configs}
        self._check_fits(estimate, "estimated from the input data size")

    def _headroom(self, label: str) -> int:
        """What the config's instance takes beyond its cache (:attr:`Engine.memory_headroom`)."""
        from tdebench.engines import get_engine

        name = self.plan.config(label).engine
        if name not in self.engines:
            self.engines[name] = get_engine(name)
        return self.engines[name].memory_headroom

    def _check_fits(self, data_per_config: dict[str, float], how: str) -> None:
        top = max(self.ratios)
        need = sum(top * data + self._headroom(label) for label, data in data_per_config.items())
        room = MEMORY_SHARE * self.total_memory
        if need > room:
            raise EnvironmentProblem(
                f"--memory-ratio {ratio_text(top)} needs {_gib(need)} of cache for {len(data_per_config)} config(s) "
                f"({how}), more than {MEMORY_SHARE:.0%} of this machine's {_gib(self.total_memory)}",
                "give smaller ratios, a smaller scale factor or fewer configs")

    # per trial ------------------------------------------------------------------------------------------------
    def trial_name(self, block: Block) -> str:
        """"warm-up" or "trial 2/3" (numbered within the block's ratio)."""
        if block.warmup:
            return "warm-up"
        if block.memory_ratio is None:  # no sweep: blocks are numbered 1, 2, ... (beyond --trials with --precision)
            return f"trial {block.number}" if self.plan.open_ended else f"trial {block.number}/{self.plan.trials}"
        number = block.number % self.plan.regime_span
        return f"trial {number}" if self.plan.open_ended else f"trial {number}/{self.plan.trials}"

    def row_label(self, label: str, block: Block) -> str:
        """The config label the rows of ``label``'s trial in ``block`` carry."""
        return regime_label(label, block.memory_ratio)

    def label_recorder(self, rec: Recorder, block: Block) -> None:
        """Rows of a trial at a ratio: the regime label, and ``warmup`` for each ratio's warm-up block."""
        if block.memory_ratio is None:
            return
        rec.config = regime_label(rec.config, block.memory_ratio)
        if block.warmup and self.plan.warmup_trials:
            rec.status = "warmup"

    def apply(self, state: ConfigState, block: Block, manifest: dict[str, Any],
              say: Callable[[str], None]) -> None:
        """Size the instance's cache for ``block``'s ratio (once per ratio) and record the regime."""
        ratio = block.memory_ratio
        label = state.config.label
        if ratio is None or self.current.get(label) == ratio:
            return
        memory = manifest.setdefault("memory", {"ratios": list(self.ratios), "data_bytes": {}, "regimes": {}})
        self.engines.setdefault(state.config.engine, state.engine)
        data = self._data_bytes(state.engine.name, manifest)
        if not memory["regimes"]:  # the real sizes are known now: check again before the first trial
            sizes = {c.label: self._data_bytes(c.engine, manifest) for c in self.plan.configs}
            self._check_fits(sizes, "from the loaded data")
        cache = int(ratio * data)
        source = self.plan.page_source or next(iter(state.engine.page_sources), "")
        own = state.instance.cache()
        if own is None:  # check_before_work refuses such an engine before any work
            raise UsageError(f"--memory-ratio: '{state.label}' has no cache tdebench can set", "leave out --memory-ratio")
        applied = own.resize(cache, source)
        effective = int(applied.get("cache_bytes", cache))
        shown = ", ".join(f"{k}={v}" for k, v in applied.items() if k in (state.engine.cache_setting,))
        where = {"memory": ", misses read from the OS page cache", "disk": ", misses read from the disk"}.get(source, "")
        say(f"{label}: cache {_size(effective)} for {ratio_text(ratio)} × {_size(data)} of loaded data ({shown}){where}")
        self.current[label] = ratio
        regime = regime_label(label, ratio)
        memory["regimes"][regime] = {"config": label, "memory_ratio": ratio, "data_bytes": data,
                                     "cache_bytes": effective, "requested_cache_bytes": cache,
                                     "page_source": source, "applied": applied}
        self._record_config(manifest, label, regime, ratio, applied)

    def _rank(self, ratio: float) -> int:
        return self.ratios.index(ratio) if ratio in self.ratios else len(self.ratios)

    def _data_bytes(self, engine: str, manifest: dict[str, Any]) -> int:
        """The loaded data of ``engine``'s plain twin (else its largest config), measured once per run."""
        known = manifest.setdefault("memory", {}).setdefault("data_bytes", {})
        if engine in known:
            return int(known[engine])
        entries = [c for c in manifest.get("configs", []) if c.get("engine") == engine and "base_label" not in c]
        sizes = {str(e.get("label")): loaded_bytes(e) for e in entries}
        plain = [label for label, e in zip(sizes, entries) if str(e.get("encryption")) == "none" and sizes[label]]
        data = sizes[plain[0]] if plain else max(sizes.values(), default=0)
        if data <= 0:
            raise EnvironmentProblem(f"--memory-ratio: the size of the data loaded into {engine} is unknown",
                                     "this is a bug; run without --memory-ratio")
        known[engine] = data
        return data

    def _record_config(self, manifest: dict[str, Any], label: str, regime: str, ratio: float,
                       applied: dict[str, Any]) -> None:
        """A manifest ``configs`` entry for the regime label: the config's, with the settings it ran with."""
        configs = manifest.setdefault("configs", [])
        base = next((c for c in configs if c.get("label") == label), {"label": label})
        entry = {k: copy.deepcopy(v) for k, v in base.items() if k not in ("storage", "cache_bytes")}
        settings = dict(entry.get("settings") or {})
        settings.update({k: v for k, v in applied.items() if not isinstance(v, (dict, list))})
        entry.update(label=regime, base_label=label, memory_ratio=ratio, settings=settings)
        rest = [c for c in configs if c.get("label") != regime] + [entry]
        bases = [c for c in rest if "base_label" not in c]
        order = {str(c.get("label")): i for i, c in enumerate(bases)}
        regimes = sorted((c for c in rest if "base_label" in c),
                         key=lambda c: (self._rank(float(c["memory_ratio"])),
                                        order.get(str(c["base_label"]), len(order))))
        manifest["configs"] = bases + regimes  # configs as loaded, then ratio by ratio in the configs' order


def check_plan(plan: RunPlan) -> None:
    """The checks of :meth:`MemoryRegimes.check_before_work` for a plan, before its run directory exists."""
    if not plan.memory_ratios:
        return
    from tdebench.engines import get_engine
    from tdebench.workloads import make_workload

    engines = {c.engine: get_engine(c.engine) for c in plan.configs}
    workload = make_workload(plan, None)  # type: ignore[arg-type] - only its size estimate is asked
    MemoryRegimes(plan).check_before_work(engines, workload.estimated_input_bytes())
