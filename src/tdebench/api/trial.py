"""What a trial works on and produces: one config's state, its recorder, its result."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Config, Engine, Instance
from tdebench.api.measurement import Measurement


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
    def dialect(self) -> Dialect:
        return self.instance.dialect


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


@dataclass
class Recorder:
    """Collects the measurements of one trial (or of a load) before they are appended in one go."""

    run_id: str
    block: int
    config: str
    engine: str
    encryption: str
    workload: str = "tpch"
    status: str = "ok"
    rows: list[Measurement] = field(default_factory=list)

    def add(self, test: str, step: str, metric: str, value: float, unit: str, stream: int | None = None,
            status: str | None = None) -> None:
        """One measured value; ``status`` defaults to the recorder's (``warmup`` for block 0)."""
        self.rows.append(Measurement(self.run_id, self.block, self.block, self.config, self.engine, self.encryption,
                                     self.workload, test, step, metric, float(value), unit, stream,
                                     status=status or self.status))
