"""A run's plan: configs, workload, trials and the randomized, interleaved block order."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.engines.base import Config
from tdebench.errors import UsageError

WORKLOADS = ("tpch",)
TESTS = ("power",)


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

    def __post_init__(self) -> None:
        if not self.configs:
            raise UsageError("no configuration to run", "give --encryption with at least one spec")
        if not self.sf > 0:
            raise UsageError(f"--sf must be greater than 0, not {self.sf:g}", "use e.g. --sf 0.01, 0.1 or 1")
        if self.trials < 1:
            raise UsageError(f"--trials must be at least 1, not {self.trials}", "use e.g. --trials 3")
        if self.warmup_trials not in (0, 1):
            raise UsageError(f"--warmup must be 0 or 1, not {self.warmup_trials}", "use --warmup 1 (default) or 0")
        labels = [c.label for c in self.configs]
        if len(set(labels)) != len(labels):
            raise UsageError("two configurations have the same label", "list each engine/spec pair once")

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
            "tests": list(self.tests),
            "sf": self.sf,
            "trials": self.trials,
            "warmup_trials": self.warmup_trials,
            "cache": self.cache,
            "seed": self.seed,
            "configs": [{"label": c.label, "engine": c.engine, "encryption": str(c.spec)} for c in self.configs],
            "blocks": [{"block": b.number, "warmup": b.warmup, "order": list(b.order)} for b in self.blocks()],
        }
