"""Per-config state during a run, shared by the orchestrator and the workloads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.engines.base import Config, Engine, Instance


@dataclass
class ConfigState:
    """One config's instance and what a workload needs to remember between trials."""

    config: Config
    engine: Engine
    instance: Instance
    applied: list[Any] = field(default_factory=list)  # e.g. TPC-H update sets applied since load/restore
    failures_in_a_row: int = 0
    snapshot: Path | None = None
    abandoned: bool = False
    sampler: Any = None  # the ResourceSampler watching the server during the current trial

    def mark(self, step: str | None) -> None:
        """Attribute server resources from now on to ``step`` (e.g. "q01"); no-op when not sampling."""
        if self.sampler is not None:
            self.sampler.mark(step)

    @property
    def label(self) -> str:
        return self.config.label

    @property
    def dialect(self) -> str:
        return self.engine.dialect


@dataclass
class TrialResult:
    """What went wrong in a trial and a digest of its deterministic answers (compared across twins)."""

    failures: list[str] = field(default_factory=list)
    answer_digest: dict[int, str] = field(default_factory=dict)
    sets_applied: list[Any] = field(default_factory=list)
    timeouts: int = 0  # how many of ``failures`` are timeouts

    @property
    def status(self) -> str | None:
        """None when the trial succeeded; else "timeout" (it only timed out) or "failed"."""
        if not self.failures:
            return None
        return "timeout" if self.timeouts >= len(self.failures) else "failed"
