"""Workload options: one pydantic base class and one parser shared by every workload.

Options come from named flags (``--warehouses``, ``--vus``, ``--rows``, ...), ``--workload-option KEY=VALUE``
and an experiment file's ``[run.options]``. The plan checks them before any work starts
(:func:`tdebench.workloads.check_workload_options`); an unknown or ill-typed option is a one-line
UsageError naming the key, the workload and what is allowed. Validators raise ``ValueError`` with a short
reason; the key, the value and the workload are added here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tdebench.errors import UsageError

if TYPE_CHECKING:
    from tdebench.api.engine import Config
from tdebench.workloads.scalefactor import SCALE_FACTOR_FIX, scale_factor_problem


def word_list(value: Any) -> list[str]:
    """``"select,insert"`` or a list -> lower-case words; ValueError for anything else."""
    if not isinstance(value, (str, list, tuple)):
        raise ValueError("give words separated by commas")
    items = value.split(",") if isinstance(value, str) else list(value)
    return [str(v).strip().lower() for v in items if str(v).strip()]


class WorkloadOptions(BaseModel):
    """Base of every workload's options model; subclasses set ``workload_name`` and may set ``fix_hint``."""

    model_config = ConfigDict(extra="forbid")
    workload_name: ClassVar[str] = ""
    # how to write good values: the fix of a bad-value error (default: the workload's documentation)
    fix_hint: ClassVar[str] = ""
    #: options that are paths: in an experiment file, relative to the file's directory
    path_options: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def allowed_keys(cls) -> list[str]:
        return sorted(cls.model_fields)

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> Self:
        """Validate raw options (``-`` in a key is read as ``_``); UsageError on the first problem."""
        data = {str(k).strip().lower().replace("-", "_"): v for k, v in (raw or {}).items()}
        unknown = [k for k in data if k not in cls.model_fields]
        if unknown:
            raise cls._unknown(unknown[0])
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise cls._bad_value(exc.errors()[0], data) from None

    def check_configs(self, configs: "Sequence[Config]") -> None:
        """Raise UsageError if the workload cannot run on these configs (e.g. an engine that lacks a capability
        the workload needs); called with :meth:`check_plan`, before any work. Default: nothing to check."""

    def check_plan(self, families: set[str], reset: str) -> None:
        """Raise UsageError if the workload cannot run as planned: SQL of these dialect families (``sqlite``,
        ``mariadb``, ``postgres``: the plan's engines), the plan's ``reset`` between trials (``none`` or
        ``snapshot``). Called when the plan is built, before any work. Default: nothing to check."""

    def why_no_steps(self) -> tuple[str, str] | None:
        """None when a trial with these options runs as steps two twins can run side by side (``--schedule
        duet``: the workload's ``stepped_trial``); else (why not, the fix). Default: whole trials only."""
        return (f"--workload {self.workload_name} runs whole trials, with no steps two twins can run side by side",
                "use --schedule query or --schedule block (docs/precision.md)")

    def why_no_turns(self) -> tuple[str, str] | None:
        """None when every value a stepped trial with these options records is timed by tdebench's client thread
        with :func:`tdebench.api.clock.now_ns` (``--schedule turns`` holds a twin's server still and stops that
        clock meanwhile); else (why not, the fix). Default: its clients keep their own time."""
        return (f"--workload {self.workload_name} is timed by clients that keep their own time, which go on "
                "counting while --schedule turns holds their server", "use --schedule duet or query")

    @classmethod
    def _unknown(cls, key: str) -> UsageError:
        name = cls.workload_name
        if not cls.model_fields:
            return UsageError(f"unknown {name} option '{key}'; {name} takes no workload options (allowed keys: none)",
                              "remove it from --workload-option / [run.options]; flags such as --warehouses or "
                              "--rows belong to other workloads")
        return UsageError(f"unknown {name} option '{key}'; allowed keys: {', '.join(cls.allowed_keys())}",
                          f"correct or remove it in --workload-option / [run.options]; see docs/workloads/{name}.md")

    @classmethod
    def _bad_value(cls, error: Mapping[str, Any], data: Mapping[str, Any]) -> UsageError:
        reason = str(error.get("msg", "")).removeprefix("Value error, ")
        cause = (error.get("ctx") or {}).get("error")
        fix = (cause.fix if isinstance(cause, ValueWithFix) else None) or cls.fix_hint \
            or f"see docs/workloads/{cls.workload_name}.md for the allowed values"
        loc = error.get("loc") or ()
        if not loc:
            return UsageError(f"bad {cls.workload_name} options: {reason}", fix)
        key = str(loc[0])
        return UsageError(f"bad value {data.get(key)!r} for {cls.workload_name} option '{key}': {reason}", fix)


class ValueWithFix(ValueError):
    """A bad option value whose fix is its own, not the workload's general hint."""

    def __init__(self, reason: str, fix: str) -> None:
        super().__init__(reason)
        self.fix = fix


class ScaleFactorOption(WorkloadOptions):
    """Options of workloads that load TPC-H data: its scale factor (``--sf``)."""

    sf: float = Field(0.01, gt=0)

    @field_validator("sf")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("give a finite number > 0, e.g. 0.01, 0.1 or 1")
        problem = scale_factor_problem(value)
        if problem:
            raise ValueWithFix(problem, SCALE_FACTOR_FIX)
        return value
