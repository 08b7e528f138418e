"""One measured value: a row of ``measurements.csv``. Its columns are defined here and nowhere else."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

COLUMNS = ("run_id", "block", "trial", "config", "engine", "encryption", "workload", "test", "stream",
           "step", "metric", "value", "unit", "started_at", "status", "round")
#: columns a file written before schema version 3 lacks (read as empty)
OPTIONAL_COLUMNS = ("round",)
#: statuses a row can have (docs/result-format.md says what each means)
STATUSES = ("ok", "failed", "timeout", "warmup", "missing", "aborted", "superseded", "fault")
#: the test of the rows a workload's load writes (one-off: trial 0), and the other one-off tests of a run
LOAD_TEST = "load"
ONE_OFF_TESTS = (LOAD_TEST, "validation", "storage")


def utc_now() -> str:
    """Current time, ISO-8601 UTC with milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Measurement:
    """One measured value (one row of measurements.csv)."""

    run_id: str
    block: int
    trial: int
    config: str
    engine: str
    encryption: str
    workload: str
    test: str
    step: str
    metric: str
    value: float
    unit: str
    stream: int | None = None
    started_at: str = field(default_factory=utc_now)
    status: str = "ok"
    #: the round of an interleaved (slice) schedule inside its block, 1..R: the pairing unit is then
    #: (block, round); None for values whose pairing unit is the block
    round: int | None = None

    def row(self, columns: tuple[str, ...] = COLUMNS) -> list[str]:
        """The values in the order of ``columns`` (a file's own header)."""
        values = asdict(self)
        values["stream"] = "" if self.stream is None else str(self.stream)
        values["round"] = "" if self.round is None else str(self.round)
        values["value"] = repr(float(self.value))
        return [str(values[c]) for c in columns]
