"""Builds measurement rows for one config and block, so callers only say what was measured."""

from __future__ import annotations

from dataclasses import dataclass, field

from tdebench.results.rundir import Measurement


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
