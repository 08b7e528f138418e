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
    probe: Any = None    # the StepProbe reading CPU times and engine counters at every mark (measure/probes.py)

    def mark(self, step: str | None, *, test: str = "", total: str = "") -> None:
        """Attribute server resources from now on to ``step`` (e.g. "q01"); None ends the current step.

        Workloads call it at every step boundary of a trial. The 1 Hz sampler attributes its samples to the step,
        and the step probe reads the server's and the client's CPU time and the engine's counters right at the
        boundary: their deltas are recorded per step (``counters/<step>/<counter>`` rows for every step; with
        ``test`` also ``<test>/<step>/server_cpu`` and ``client_cpu`` rows beside the step's elapsed time).
        ``total`` names a step of the same test that sums this one (e.g. the queries into "total")."""
        if self.probe is not None:
            self.probe.end()
        if self.sampler is not None:
            self.sampler.mark(step)
        if self.probe is not None and step:
            self.probe.begin(step, test, total)

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
            status: str | None = None, round: int | None = None) -> None:
        """One measured value; ``status`` defaults to the recorder's (``warmup`` for block 0); ``round``: the
        interleaved schedule's round inside the block (its pairing unit), None when the block pairs."""
        self.rows.append(Measurement(self.run_id, self.block, self.block, self.config, self.engine, self.encryption,
                                     self.workload, test, step, metric, float(value), unit, stream,
                                     status=status or self.status, round=round))
