"""The sql workload's options: the directory (``--workload-dir DIR``, ``--workload-option dir=DIR`` or ``[run.options]
dir`` in an experiment file, where a relative path is relative to the file), and how the interleaved schedule
(``--schedule query``, the default) runs it. Parsing reads and checks the whole directory, so a malformed one is
refused before any work.

One connection (no ``vus``): per block, every statement runs ``duration`` seconds per config, in visits of about
``slice`` seconds alternating between the configs. With ``vus`` (``--vus 4``, or ``1,4`` for a sweep): that many
connections run the statement mix (weighted by ``[weights]``) for ``duration`` seconds per config, block and VU
count, after a ``rampup``, in slices of ``slice`` seconds alternating between the configs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import Field, PrivateAttr, field_validator, model_validator

from tdebench.errors import UsageError
from tdebench.workloads.options import ValueWithFix, WorkloadOptions
from tdebench.workloads.tpcc.options import parse_duration, parse_vus

#: one connection: measured seconds per statement, config and block, and the length of one visit
ONE_DURATION, ONE_SLICE = 0.5, 0.02
#: with --vus: measured seconds per VU count, config and block, ramp-up, and slice (as TPC-C's --precision steps)
MIX_DURATION, MIX_SLICE, MIX_RAMPUP = 10.0, 1.0, 2.0
MIN_SLICE = 0.005


class SqlOptions(WorkloadOptions):
    """Validated options; :attr:`layout` is the checked directory."""

    workload_name = "sql"
    path_options: ClassVar[tuple[str, ...]] = ("dir",)
    fix_hint = "give --workload-dir DIR, the directory holding schema.sql, data/ and queries/ (docs/workloads/sql.md)"
    dir: str | None = None
    vus: list[int] | None = None
    duration: float | None = None
    slice: float | None = None
    rampup: float | None = None
    seed: int = Field(20241129, ge=0)  # the statement mix each connection draws (with --vus), per block
    _layout: Any = PrivateAttr(default=None)

    @field_validator("vus", mode="before")
    @classmethod
    def _vus(cls, value: Any) -> list[int] | None:
        return None if value is None else parse_vus(value)

    @field_validator("duration", "slice", "rampup", mode="before")
    @classmethod
    def _seconds(cls, value: Any, info: Any) -> float | None:
        return None if value is None else parse_duration(value, info.field_name)

    @field_validator("duration", "slice")
    @classmethod
    def _positive(cls, value: float | None, info: Any) -> float | None:
        if value is not None and value < MIN_SLICE:
            raise ValueWithFix(f"{info.field_name} must be at least {MIN_SLICE * 1000:g} ms",
                               f"give e.g. --{info.field_name} {'20ms' if info.field_name == 'slice' else '500ms'}")
        return value

    @model_validator(mode="after")
    def _fits(self) -> "SqlOptions":
        if self.slice is not None and self.slice > self.measured_seconds:
            raise ValueWithFix(f"slice ({self.slice:g} s) is longer than duration ({self.measured_seconds:g} s), the "
                               "measured time per config and block", "use a shorter --slice or a longer --duration")
        if self.rampup is not None and self.vus is None:
            raise ValueWithFix("rampup applies with --vus only (one connection has no clients to ramp up)",
                               "leave --rampup out, or give --vus N")
        return self

    @property
    def measured_seconds(self) -> float:
        """Measured seconds per config and block: per statement (one connection) or per VU count."""
        return self.duration if self.duration is not None else (MIX_DURATION if self.vus else ONE_DURATION)

    @property
    def slice_seconds(self) -> float:
        """One visit (one connection) or slice (with --vus)."""
        if self.slice is not None:
            return self.slice
        return min(MIX_SLICE if self.vus else ONE_SLICE, self.measured_seconds)

    @property
    def rampup_seconds(self) -> float:
        return self.rampup if self.rampup is not None else MIX_RAMPUP

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> Self:
        options = super().parse(raw)
        if not options.dir:
            raise UsageError(f"--workload {cls.workload_name} needs the directory of your workload", cls.fix_hint)
        options._layout = load_dir(options.dir)
        return options

    @property
    def layout(self) -> Any:
        """The checked :class:`~tdebench.workloads.sql.layout.WorkloadDir`."""
        return self._layout

    def check_plan(self, families: set[str], reset: str) -> None:
        check_dir(self._layout, families, reset)
        if self.vus and max(self.vus) > 1 and self._layout.settings.writes.restore != "undo" and any(
                s.kind == "write" for s in self._layout.steps):
            raise UsageError("--vus with writes restored by snapshot: a write can then run only once per block, "
                             "and concurrent connections would repeat it", "give every write an undo file "
                             "(restore = \"undo\" in workload.toml) or leave --vus out (docs/workloads/sql.md)")


def parse_options(raw: dict[str, Any]) -> SqlOptions:
    """UsageError naming the file of the directory that is wrong, and the fix."""
    return SqlOptions.parse(raw)


def load_dir(path: str) -> Any:
    """The checked workload directory at ``path``; UsageError naming what is wrong in it, and the fix."""
    from tdebench.workloads.sql.layout import DirProblem, load_workload_dir

    try:
        return load_workload_dir(Path(path))
    except DirProblem as exc:
        raise UsageError(str(exc), exc.fix) from None


def check_dir(layout: Any, families: set[str], reset: str) -> None:
    """UsageError unless ``layout`` has what every family of the plan needs and can be restored by ``reset``."""
    from tdebench.workloads.sql.layout import DirProblem, check_family, check_restore

    try:
        for family in sorted(families):
            check_family(layout, family)
        check_restore(layout, reset)
    except DirProblem as exc:
        raise UsageError(str(exc), exc.fix) from None
