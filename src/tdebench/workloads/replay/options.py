"""The replay workload's options: ``dir`` (the workload directory whose schema and data every twin loads, e.g. one
``tdebench capture`` wrote), ``log`` (the server log to replay), ``speed`` (``1``: think times as logged, ``2``:
halved, ``max``: none) and ``slice`` (under ``--schedule query``, the log's time cut into segments of this many
seconds, interleaved across the twins; ``0``: the whole log as one segment). The log is read when the plan is
built: an unknown format, an empty log, or a log of which no statement uses the directory's tables is refused
before any work."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import PrivateAttr, field_validator

from tdebench.errors import UsageError
from tdebench.workloads.options import WorkloadOptions
from tdebench.workloads.sql.options import check_dir, load_dir
from tdebench.workloads.tpcc.options import parse_duration

#: seconds of the log's time per segment of the interleaved schedule
DEFAULT_SEGMENT = 1.0

FIX = ("give --workload-dir DIR (the schema and data to load, e.g. from tdebench capture) and --log FILE "
       "(docs/workloads/replay.md)")


class ReplayOptions(WorkloadOptions):
    workload_name = "replay"
    path_options: ClassVar[tuple[str, ...]] = ("dir", "log")
    fix_hint = FIX
    dir: str | None = None
    log: str | None = None
    speed: str = "1"
    slice: float | None = DEFAULT_SEGMENT
    _layout: Any = PrivateAttr(default=None)
    _plan: Any = PrivateAttr(default=None)

    @field_validator("speed")
    @classmethod
    def _speed(cls, value: str) -> str:
        text = str(value).strip().lower()
        if text != "max":
            try:
                if float(text) <= 0:
                    raise ValueError
            except ValueError:
                raise ValueError("speed is a factor above 0 (2 halves the think times) or max (none)") from None
        return text

    @field_validator("slice", mode="before")
    @classmethod
    def _slice(cls, value: Any) -> float | None:
        if value is None:
            return None
        seconds = parse_duration(value, "slice")
        return seconds if seconds > 0 else None

    @property
    def factor(self) -> float | None:
        """Think times are divided by this; None: dropped."""
        return None if self.speed == "max" else float(self.speed)

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> Self:
        from tdebench.workloads.replay.calls import read_calls

        options = super().parse(raw)
        if not options.dir or not options.log:
            raise UsageError("--workload replay needs the directory to load and the log to replay", FIX)
        options._layout = load_dir(options.dir)
        wd = options._layout
        keys = {t.name.lower(): [c.lower() for c in t.primary_key] for t in wd.tables}
        options._plan = read_calls(Path(options.log), wd.settings.dialect, set(keys), keys, None)
        if not options._plan.calls:
            raise UsageError(f"--log {options.log}: none of its {options._plan.skipped} statements "
                             f"uses the tables of {options.dir}", "replay the log of the database the directory "
                             "was captured from")
        return options

    @property
    def layout(self) -> Any:
        return self._layout

    @property
    def plan(self) -> Any:
        return self._plan

    def check_plan(self, families: set[str], reset: str) -> None:
        check_dir(self._layout, families, reset)
        if self._plan.other_writes and reset != "snapshot":
            which = ", ".join(sorted(set(self._plan.other_writes))[:3])
            raise UsageError(f"the log has writes whose effect cannot be undone after a trial ({which}: UPDATE, "
                             "DELETE or INSERT without literal keys)",
                             "run with --reset snapshot (the loaded data is restored before every trial)")
