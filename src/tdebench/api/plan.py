"""A run's plan: configs, workload and its options, trials and the randomized, interleaved block order.

The plan knows no workload: each workload reads its own options (e.g. TPC-H's scale factor, tests and
streams) from ``workload_options`` through its options model.

Schedules (``schedule``): ``block`` runs one whole trial per config in each block's random order; ``query``
keeps every twin up and, inside each block, runs one step (a TPC-H query) on every config in a fresh random
order, ``repeat`` times, before the next step (:mod:`tdebench.runner.schedule`); ``duet`` runs each step on two
twins at the same moment, each in a cgroup with its own CPUs (:mod:`tdebench.runner.duet`). With ``precision`` the
number of blocks is open-ended: ``trials`` is the minimum (the stopping rule's pilot) and blocks are added
until the interval is narrow enough, ``max_trials`` or ``max_time`` (:mod:`tdebench.runner.precision`).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.api.engine import Config
from tdebench.api.faults import Fault, parse_fault
from tdebench.api.keys import FILE
from tdebench.api.regime import PAGE_SOURCES, SUFFIX, parse_ratios
from tdebench.encryption import parse_spec
from tdebench.errors import UsageError

SCHEDULES = ("block", "query", "duet", "turns")
#: what ``--precision`` can watch besides a workload's headlines by name: all of them (``headline``, the default, or
#: ``headlines``), its server CPU time (per transaction for OLTP), its headline latency percentile, or TPC-H's
#: Power@Size (the geometric mean of the power test's timings, where no single query dominates:
#: docs/lab/memory-bound-tpch.md), or, with pages read from the disk, its time at a common wait per page read
PRECISION_METRICS = ("headline", "headlines", "cpu", "p50", "p95", "p99", "power", "common-wait")
_WATCHED = re.compile(r"\s*([A-Za-z0-9_.-]+)\s*(?:=\s*([0-9]*\.?[0-9]+)\s*%?\s*)?")


def watched_items(text: str) -> list[tuple[str, float | None]]:
    """``--precision-metric`` as (name, its own target in points or None): ``reads,writes=5%`` ->
    [("reads", None), ("writes", 5.0)]; UsageError for anything else. Names are checked against the workload
    later (:func:`tdebench.runner.precision.watched_series`)."""
    out: list[tuple[str, float | None]] = []
    for item in str(text).split(","):
        match = _WATCHED.fullmatch(item)
        target = float(match.group(2)) if match and match.group(2) else None
        if not match or (target is not None and not 0 < target <= 100):
            raise UsageError(f"--precision-metric {text!r}: '{item.strip()}' is not a headline name, a name=P% "
                             "target or one of " + ", ".join(PRECISION_METRICS),
                             "give e.g. --precision-metric reads,writes or --precision-metric reads,writes=5%")
        if match.group(1) not in [name for name, _ in out]:
            out.append((match.group(1), target))
    return out
#: --precision with --memory-ratio and without --max-trials: at most this many blocks per ratio
MAX_BLOCKS_PER_RATIO = 199
#: options that plans of manifest schema 1 kept at the top level, for the workloads that read TPC-H data
_V1_DATA_KEYS = {"tpch": ("sf", "tests", "streams"), "backup": ("sf",), "load": ("sf",)}


@dataclass(frozen=True)
class Block:
    """One randomized block: every config runs one trial, in ``order``. Block 0 is the warm-up; with a memory
    sweep each ratio has its own warm-up block (``regime_warmup``)."""

    number: int
    order: tuple[str, ...]
    #: the cache/data ratio every config runs this block at (:mod:`tdebench.api.regime`); None: as configured
    memory_ratio: float | None = None
    regime_warmup: bool = False
    #: steps this block leaves out: every figure ``--precision`` watches that needs them has met its target
    skip_steps: frozenset[str] = frozenset()

    @property
    def warmup(self) -> bool:
        return self.number == 0 or self.regime_warmup


@dataclass
class RunPlan:
    """Everything a run will do, validated before any work starts."""

    configs: list[Config]
    trials: int = 3
    warmup_trials: int = 1
    workload: str = "tpch"
    seed: int = field(default_factory=lambda: random.SystemRandom().randrange(1 << 31))
    keep_answers: bool = False
    data_dir: Path | None = None
    cache: str = "warm"
    reset: str = "none"
    query_timeout: float = 0.0
    max_failures: int = 3
    workload_options: dict[str, Any] = field(default_factory=dict)  # raw; checked by the workload's model
    schedule: str = "block"             # the command line's default is chosen in cli/run.py
    repeat: int = 1                      # query schedule: runs of each step per config per block
    precision: float | None = None       # target 95% CI half-width of the headline overhead, in points
    #: what the stopping rule watches (:func:`watched_items`): the workload's headlines (all of them, the default),
    #: some of them by name, each with its own target if given (``reads,writes=5%``), or a keyword (cpu, p95, ...)
    precision_metric: str = "headline"
    max_time: float | None = None        # seconds from the start of the run; no block starts that would end later
    max_trials: int | None = None        # with precision: at most this many measured blocks
    pin: bool = False                    # pin servers and client to fixed cores (runner/pinning.py)
    pin_reason: str = ""                 # why: asked for, or the workload's default (Workload.pin_by_default)
    nice: int | None = None              # run servers and client at this nice value (runner/pinning.py)
    #: restart every twin's server, keeping its cache, before every measured block (runner/restarts.py);
    #: None: yes with --schedule query and a warm cache where every engine can, else no
    restart_twins: bool | None = None
    #: cache/data ratios swept one after the other (:mod:`tdebench.api.regime`); empty: the configured caches
    memory_ratios: tuple[float, ...] = ()
    #: where a page the swept cache misses comes from (``--page-source``): ``disk`` or ``memory`` (the OS page
    #: cache holds the data); "": each engine's default (:attr:`tdebench.api.engine.Engine.page_sources`)
    page_source: str = ""
    #: a fault injected into one measured block's trials (``--fault``, :mod:`tdebench.api.faults`); None: none
    fault: str | None = None
    #: a plain config (its label) that every config of its SQL family, whatever its engine, is also compared with
    #: (the report's layers table); each config's own plain twin stays its per-engine baseline
    baseline: str | None = None
    #: the user's own key server (``--key-server``: a KV v2 mount URL) for configs whose keys are not ``file``;
    #: None: the run starts a private one (:mod:`tdebench.api.keys`)
    key_server: str | None = None
    #: the options a run whose misses are read from the disk took as that regime's defaults (``schedule``, ``pin``,
    #: ``warmup``, ``precision_metric``, chosen by the command line: docs/precision.md); empty: none
    disk_defaults: tuple[str, ...] = ()
    #: why such a run keeps another schedule than that regime's default (e.g. taking turns needs root); "": none
    schedule_note: str = ""

    def __post_init__(self) -> None:
        if not self.configs:
            raise UsageError("no configuration to run", "give --encryption with at least one spec")
        if self.trials < 1:
            raise UsageError(f"--trials must be at least 1, not {self.trials}", "use e.g. --trials 3")
        if self.warmup_trials not in (0, 1):
            raise UsageError(f"--warmup must be 0 or 1, not {self.warmup_trials}", "use --warmup 1 (default) or 0")
        if self.cache not in ("warm", "cold"):
            raise UsageError(f"--cache must be warm or cold, not '{self.cache}'", "use --cache warm or --cache cold")
        if self.reset not in ("none", "snapshot"):
            raise UsageError(f"--reset must be none or snapshot, not '{self.reset}'", "use --reset none or snapshot")
        if self.query_timeout < 0 or self.max_failures < 1:
            raise UsageError("--query-timeout must be >= 0 and --max-failures >= 1", "use e.g. --query-timeout 600")
        self._check_precision_options()
        labels = [c.label for c in self.configs]
        if len(set(labels)) != len(labels):
            raise UsageError("two configurations have the same label", "list each engine/spec pair once")
        self.memory_ratios = parse_ratios(list(self.memory_ratios)) if self.memory_ratios else ()
        self._check_baseline()
        self._check_fault()
        self._check_page_source()
        if self.memory_ratios and any(SUFFIX in label for label in labels):
            raise UsageError(f"a config label contains '{SUFFIX}', which marks the memory ratio of a row",
                             "rename the config")

    def _check_fault(self) -> None:
        """``--fault``: its text, a measured block of the plan, whole trials (the block schedule)."""
        fault = self.fault_spec
        if fault is None:
            return
        if self.schedule != "block":
            raise UsageError("--fault needs whole trials (--schedule block): with interleaved slices a node's "
                             "rejoin would run during the twins' slices too", "add --schedule block or leave "
                             "--schedule out")
        if self.memory_ratios or (not self.open_ended and fault.block > self.trials):
            raise UsageError(f"--fault block={fault.block} is not a measured block of this run"
                             f"{' (a memory sweep)' if self.memory_ratios else ''}",
                             f"give block=1 to {self.trials}, or more --trials")

    def _check_page_source(self) -> None:
        """``--page-source``: one of :data:`PAGE_SOURCES`, and only with a memory sweep."""
        if not self.page_source:
            return
        if self.page_source not in PAGE_SOURCES:
            raise UsageError(f"--page-source must be {' or '.join(PAGE_SOURCES)}, not '{self.page_source}'",
                             "use --page-source disk or --page-source memory")
        if not self.memory_ratios:
            raise UsageError("--page-source says where the pages a swept cache misses come from: it needs "
                             "--memory-ratio", "add --memory-ratio (e.g. 0.25) or leave --page-source out")

    @property
    def fault_spec(self) -> Fault | None:
        """The parsed ``fault`` (UsageError for bad text)."""
        return parse_fault(self.fault) if self.fault else None

    def _check_baseline(self) -> None:
        if self.baseline is None:
            return
        plain = [c.label for c in self.configs if c.spec.is_plain]
        if self.baseline not in plain:
            what = "is not a config of this run" if self.baseline not in self.labels else "is not plain (none)"
            raise UsageError(f"baseline '{self.baseline}' {what}",
                             f"name one of the plain configs: {', '.join(plain)}" if plain
                             else "add encryption none to an engine and name its config, e.g. sqlite-none")

    def _check_precision_options(self) -> None:
        """The schedule, repetition and stopping options: one error naming the fix each."""
        if self.schedule not in SCHEDULES:
            raise UsageError(f"--schedule must be block, query, duet or turns, not '{self.schedule}'",
                             "use --schedule query (steps interleaved), --schedule duet (steps side by side), "
                             "--schedule turns (side by side, taking turns) or --schedule block (whole trials)")
        if not isinstance(self.repeat, int) or isinstance(self.repeat, bool) or self.repeat < 1:
            raise UsageError(f"--repeat must be a whole number of at least 1, not {self.repeat!r}",
                             "use e.g. --repeat 1 (each step once per block) or --repeat 3")
        if self.repeat > 1 and self.schedule == "block":
            raise UsageError("--repeat applies to --schedule query, duet and turns only",
                             "add --schedule query or leave --repeat out")
        if self.schedule != "block" and self.cache == "cold":
            raise UsageError(f"--schedule {self.schedule} keeps every server up and warm, so it cannot run "
                             "--cache cold", "use --schedule block with --cache cold, or --cache warm")
        if self.precision is not None and not (math.isfinite(self.precision) and 0 < self.precision <= 100):
            raise UsageError(f"--precision must be a half-width between 0 and 100%, not {self.precision!r}",
                             "give the 95% CI half-width you need, e.g. --precision 1%")
        watched_items(self.precision_metric)
        if self.precision_metric != "headline" and self.precision is None:
            raise UsageError("--precision-metric applies to --precision runs only",
                             "add --precision (e.g. 5%) or leave --precision-metric out")
        if self.max_time is not None and not (math.isfinite(self.max_time) and self.max_time > 0):
            raise UsageError(f"--max-time must be a positive duration, not {self.max_time!r}",
                             "give e.g. --max-time 20m (units s, m, h)")
        if self.nice is not None and (isinstance(self.nice, bool) or not isinstance(self.nice, int)
                                      or not -20 <= self.nice <= 19):
            raise UsageError(f"--nice must be a whole number from -20 to 19, not {self.nice!r}",
                             "use e.g. --nice -10 (negative values need root) or leave it out")
        if self.restart_twins and self.cache == "cold":
            raise UsageError("--restart-twins keeps the caches warm across restarts; --cache cold restarts every "
                             "server before every trial anyway", "leave --restart-twins out with --cache cold")
        if self.max_trials is not None:
            if self.precision is None:
                raise UsageError("--max-trials applies to --precision runs only",
                                 "add --precision (e.g. 1%) or give the number of trials with --trials")
            if self.max_trials < self.trials:
                raise UsageError(f"--max-trials {self.max_trials} is below the {self.trials} trials every "
                                 "precision run starts with", f"use --max-trials {self.trials} or more")

    @property
    def open_ended(self) -> bool:
        """Blocks are added until the stopping rule or a limit says stop (``--precision``)."""
        return self.precision is not None

    @property
    def labels(self) -> list[str]:
        return [c.label for c in self.configs]

    def config(self, label: str) -> Config:
        return next(c for c in self.configs if c.label == label)

    def blocks(self) -> list[Block]:
        """Warm-up block (if any) then ``trials`` blocks, each a fresh random order of the configs. With memory
        ratios, that sequence once per ratio, in the order given: ratio ``i`` numbers its blocks from
        ``i × (trials + 1)``, so every trial has a block number of its own (TPC-H's update sets follow it)."""
        if self.memory_ratios:
            return self._regime_blocks()
        out = []
        for block in self.iter_blocks():
            if block.number > self.trials:
                break
            out.append(block)
        return out

    def iter_blocks(self) -> Iterator[Block]:
        """Warm-up block (if any) then blocks 1, 2, … without end, each a fresh random order of the configs;
        the first ``trials`` are :meth:`blocks` (the same seed gives the same orders, so resume finds them).
        Only for plans without a memory sweep (``--precision`` refuses one)."""
        rng = random.Random(self.seed)
        number = 0 if self.warmup_trials else 1
        while True:
            order = self.labels[:]
            rng.shuffle(order)
            yield Block(number, tuple(order))
            number += 1

    @property
    def regime_span(self) -> int:
        """Block numbers each memory ratio owns: ratio ``i`` numbers its blocks ``i × span`` (its warm-up) onwards.
        ``trials + 1``; with ``--precision``, room for ``--max-trials`` (default :data:`MAX_BLOCKS_PER_RATIO`)."""
        if self.open_ended:
            return (self.max_trials or MAX_BLOCKS_PER_RATIO) + 1
        return self.trials + 1

    def iter_regime_blocks(self, index: int) -> Iterator[Block]:
        """``--precision`` with ``--memory-ratio``: ratio ``index``'s warm-up block (if any) then its blocks without
        end (at most ``regime_span - 1``), each a fresh random order drawn from ``Random("<seed>:<index>")``."""
        rng = random.Random(f"{self.seed}:{index}")
        ratio = self.memory_ratios[index]
        span = self.regime_span
        for number in range(0 if self.warmup_trials else 1, span):
            order = self.labels[:]
            rng.shuffle(order)
            yield Block(index * span + number, tuple(order), ratio, regime_warmup=number == 0 and index > 0)

    def _regime_blocks(self) -> list[Block]:
        if self.open_ended:  # the pilot blocks of every ratio (the manifest's plan); the rule adds more
            return [b for i in range(len(self.memory_ratios)) for b in self.iter_regime_blocks(i)
                    if b.number % self.regime_span <= self.trials]
        rng = random.Random(self.seed)
        first = 0 if self.warmup_trials else 1
        blocks = []
        span = self.trials + 1
        for i, ratio in enumerate(self.memory_ratios):
            for number in range(first, self.trials + 1):
                order = self.labels[:]
                rng.shuffle(order)
                blocks.append(Block(i * span + number, tuple(order), ratio, regime_warmup=number == 0 and i > 0))
        return blocks

    def to_json(self) -> dict[str, Any]:
        """The plan as recorded in the manifest."""
        return {
            "workload": self.workload,
            "workload_options": self.workload_options,
            "trials": self.trials,
            "warmup_trials": self.warmup_trials,
            "cache": self.cache,
            "reset": self.reset,
            "query_timeout": self.query_timeout,
            "max_failures": self.max_failures,
            "data_dir": str(self.data_dir) if self.data_dir else None,
            "keep_answers": self.keep_answers,
            "seed": self.seed,
            **({"memory_ratios": list(self.memory_ratios)} if self.memory_ratios else {}),
            **({"page_source": self.page_source} if self.page_source else {}),
            **({"baseline": self.baseline} if self.baseline else {}),
            **({"key_server": self.key_server} if self.key_server else {}),
            "configs": [{"label": c.label, "engine": c.engine, "encryption": str(c.spec), "settings": c.settings,
                         "tcp": c.tcp, "keep": c.keep, "name": c.name, "keys": c.keys} for c in self.configs],
            "blocks": [{"block": b.number, "warmup": b.warmup, "order": list(b.order),
                        **({"memory_ratio": b.memory_ratio} if b.memory_ratio is not None else {})}
                       for b in self.blocks()],
            "schedule": self.schedule,
            "repeat": self.repeat,
            "precision": self.precision,
            "precision_metric": self.precision_metric,
            "max_time": self.max_time,
            "max_trials": self.max_trials,
            "pin": self.pin,
            **({"pin_reason": self.pin_reason} if self.pin_reason else {}),
            "nice": self.nice,
            "restart_twins": self.restart_twins,
            **({"fault": self.fault} if self.fault else {}),
            **({"disk_defaults": list(self.disk_defaults)} if self.disk_defaults else {}),
            **({"schedule_note": self.schedule_note} if self.schedule_note else {}),
        }


def plan_from_json(data: dict[str, Any]) -> RunPlan:
    """Rebuild the plan recorded in a manifest (for ``--resume``): same configs, seed, and so blocks.

    Plans written with manifest schema 1 kept TPC-H's ``sf``, ``tests`` and ``streams`` at the top level; they
    are moved into the workload options here."""
    configs = [Config(c["engine"], parse_spec(c["encryption"]), dict(c.get("settings") or {}),
                      tcp=bool(c.get("tcp")), keep=bool(c.get("keep")), name=str(c.get("name") or ""),
                      keys=str(c.get("keys") or FILE))
               for c in data["configs"]]
    options = dict(data.get("workload_options") or {})
    for key in _V1_DATA_KEYS.get(data["workload"], ()):
        if data.get(key) is not None:
            options.setdefault(key, data[key])
    data_dir = data.get("data_dir")
    return RunPlan(configs=configs, trials=data["trials"], warmup_trials=data["warmup_trials"],
                   workload=data["workload"], seed=data["seed"], keep_answers=bool(data.get("keep_answers")),
                   data_dir=Path(data_dir) if data_dir else None, cache=data["cache"],
                   reset=data.get("reset", "none"), query_timeout=data.get("query_timeout", 0.0),
                   max_failures=data.get("max_failures", 3), workload_options=options,
                   schedule=data.get("schedule") or "block",  # runs from before schedules were whole-trial blocks
                   repeat=int(data.get("repeat") or 1), precision=data.get("precision"),
                   precision_metric=data.get("precision_metric") or "headline",
                   max_time=data.get("max_time"), max_trials=data.get("max_trials"), pin=bool(data.get("pin")),
                   pin_reason=str(data.get("pin_reason") or ""),
                   nice=data.get("nice"), restart_twins=data.get("restart_twins"),
                   memory_ratios=tuple(float(r) for r in data.get("memory_ratios") or ()),
                   page_source=str(data.get("page_source") or ""),
                   baseline=data.get("baseline"), fault=data.get("fault"), key_server=data.get("key_server"),
                   disk_defaults=tuple(data.get("disk_defaults") or ()),
                   schedule_note=str(data.get("schedule_note") or ""))
