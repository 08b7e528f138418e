"""A run's plan: configs, workload, trials and the randomized, interleaved block order."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.engines.base import Config
from tdebench.errors import UsageError
from tdebench.workloads.tpch.streams import min_streams

TESTS = ("power", "throughput")


@dataclass(frozen=True)
class Block:
    """One randomized block: every config runs one trial, in ``order``. Block 0 is the warm-up."""

    number: int
    order: tuple[str, ...]

    @property
    def warmup(self) -> bool:
        return self.number == 0


@dataclass
class RunPlan:
    """Everything a run will do, validated before any work starts."""

    configs: list[Config]
    sf: float = 0.01
    trials: int = 3
    warmup_trials: int = 1
    workload: str = "tpch"
    tests: tuple[str, ...] = ("power",)
    seed: int = field(default_factory=lambda: random.SystemRandom().randrange(1 << 31))
    keep_answers: bool = False
    data_dir: Path | None = None
    cache: str = "warm"
    streams: int | None = None
    reset: str = "none"
    query_timeout: float = 0.0
    max_failures: int = 3
    workload_options: dict[str, Any] = field(default_factory=dict)  # raw; checked against the workload's model

    def __post_init__(self) -> None:
        if not self.configs:
            raise UsageError("no configuration to run", "give --encryption with at least one spec")
        if not self.sf > 0:
            raise UsageError(f"--sf must be greater than 0, not {self.sf:g}", "use e.g. --sf 0.01, 0.1 or 1")
        if self.trials < 1:
            raise UsageError(f"--trials must be at least 1, not {self.trials}", "use e.g. --trials 3")
        if self.warmup_trials not in (0, 1):
            raise UsageError(f"--warmup must be 0 or 1, not {self.warmup_trials}", "use --warmup 1 (default) or 0")
        from tdebench.workloads import check_workload_options

        check_workload_options(self.workload, self.workload_options)  # unknown workload or option: UsageError
        unknown = [t for t in self.tests if t not in TESTS]
        if unknown or not self.tests:
            raise UsageError(f"unknown test '{','.join(unknown) or '(none)'}' in --tests", f"use {', '.join(TESTS)}")
        if self.cache not in ("warm", "cold"):
            raise UsageError(f"--cache must be warm or cold, not '{self.cache}'", "use --cache warm or --cache cold")
        if self.reset not in ("none", "snapshot"):
            raise UsageError(f"--reset must be none or snapshot, not '{self.reset}'", "use --reset none or snapshot")
        if self.streams is not None and not 1 <= self.streams <= 100:
            raise UsageError(f"--streams must be between 1 and 100, not {self.streams}", "use e.g. --streams 2")
        if self.query_timeout < 0 or self.max_failures < 1:
            raise UsageError("--query-timeout must be >= 0 and --max-failures >= 1", "use e.g. --query-timeout 600")
        labels = [c.label for c in self.configs]
        if len(set(labels)) != len(labels):
            raise UsageError("two configurations have the same label", "list each engine/spec pair once")

    @property
    def stream_count(self) -> int:
        """Throughput streams: as asked, else the spec minimum for the SF (at least 2)."""
        return self.streams if self.streams is not None else min_streams(self.sf)

    @property
    def sets_per_trial(self) -> int:
        """Update sets one trial consumes: 1 for the power test, S for the throughput test."""
        return (1 if "power" in self.tests else 0) + (self.stream_count if "throughput" in self.tests else 0)

    def update_sets(self, block: int) -> list[int]:
        """The update sets of ``block``: disjoint from every other block's, identical for every config."""
        k = self.sets_per_trial
        return list(range(block * k + 1, block * k + k + 1))

    @property
    def labels(self) -> list[str]:
        return [c.label for c in self.configs]

    def config(self, label: str) -> Config:
        return next(c for c in self.configs if c.label == label)

    def blocks(self) -> list[Block]:
        """Warm-up block (if any) then ``trials`` blocks, each a fresh random order of the configs."""
        rng = random.Random(self.seed)
        first = 0 if self.warmup_trials else 1
        blocks = []
        for number in range(first, self.trials + 1):
            order = self.labels[:]
            rng.shuffle(order)
            blocks.append(Block(number, tuple(order)))
        return blocks

    def to_json(self) -> dict[str, Any]:
        """The plan as recorded in the manifest."""
        return {
            "workload": self.workload,
            "workload_options": self.workload_options,
            "tests": list(self.tests),
            "sf": self.sf,
            "trials": self.trials,
            "warmup_trials": self.warmup_trials,
            "cache": self.cache,
            "streams": self.stream_count if "throughput" in self.tests else None,
            "reset": self.reset,
            "refresh": "every trial (warm-up included) uses its own update sets; sets are never reused, "
                       "and twins in one block get the same sets, so their data stay identical",
            "query_timeout": self.query_timeout,
            "max_failures": self.max_failures,
            "data_dir": str(self.data_dir) if self.data_dir else None,
            "keep_answers": self.keep_answers,
            "seed": self.seed,
            "configs": [{"label": c.label, "engine": c.engine, "encryption": str(c.spec), "settings": c.settings,
                         "tcp": c.tcp, "keep": c.keep, "name": c.name} for c in self.configs],
            "blocks": [{"block": b.number, "warmup": b.warmup, "order": list(b.order)} for b in self.blocks()],
        }


def plan_from_json(data: dict[str, Any]) -> RunPlan:
    """Rebuild the plan recorded in a manifest (for ``--resume``): same configs, seed, and so blocks."""
    from tdebench.encryption import parse_spec

    configs = [Config(c["engine"], parse_spec(c["encryption"]), dict(c.get("settings") or {}),
                      tcp=bool(c.get("tcp")), keep=bool(c.get("keep")), name=str(c.get("name") or ""))
               for c in data["configs"]]
    data_dir = data.get("data_dir")
    return RunPlan(configs=configs, sf=data["sf"], trials=data["trials"], warmup_trials=data["warmup_trials"],
                   workload=data["workload"], tests=tuple(data["tests"]), seed=data["seed"],
                   keep_answers=bool(data.get("keep_answers")), data_dir=Path(data_dir) if data_dir else None,
                   cache=data["cache"], streams=data.get("streams"), reset=data.get("reset", "none"),
                   query_timeout=data.get("query_timeout", 0.0), max_failures=data.get("max_failures", 3),
                   workload_options=dict(data.get("workload_options") or {}))
