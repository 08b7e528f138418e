"""Options of the TPC-C-like workload, validated from the plan's raw ``workload_options``.

They come from ``--warehouses``, ``--vus``, ``--duration``, ``--rampup``, ``--workload-option KEY=VALUE``
or an experiment file's ``[run.options]``; :class:`WorkloadOptions` turns a problem into a UsageError.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Self

from pydantic import Field, field_validator, model_validator

from tdebench.api.values import counts
from tdebench.workloads.options import WorkloadOptions
from tdebench.workloads.slicing import (DEFAULT_SLICES, PRECISION_STEPS, check_slice, check_slice_fits, rounds_for,
                                        slice_seconds, warmup_rounds_for)

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|sec|m|min|h)?\s*$", re.I)
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
MAX_VUS = 1000


def parse_duration(value: Any, option: str = "duration") -> float:
    """``"30s"``, ``"5m"``, ``"1h"``, ``"500ms"`` or a number of seconds -> seconds; ValueError if not."""
    if isinstance(value, bool):
        raise ValueError("give a duration such as 30s, 5m or 1h")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise ValueError("give a duration such as 30s, 5m, 1h or 90 (seconds)")
        seconds = float(match.group(1)) * _UNIT_SECONDS[(match.group(2) or "s").lower()]
    if seconds < 0:
        raise ValueError(f"{option} must not be negative")
    return seconds


def parse_vus(value: Any, option: str = "vus") -> list[int]:
    """``"5,10,15"``, ``5`` or ``[5, 10]`` -> list of positive ints in the given order; ValueError if not."""
    if isinstance(value, bool):
        raise ValueError("give virtual users as e.g. 5,10,15")
    out = counts(value, option, MAX_VUS, "5,10,15")
    if not out:
        raise ValueError(f"{option} is empty; give at least one number, e.g. 5")
    if len(set(out)) != len(out):
        raise ValueError(f"{option} lists a number twice; list each virtual-user count once")
    return out


class SlicedOptions(WorkloadOptions):
    """The options of a workload that runs each count of virtual users (``vus``) as a step: ``duration`` seconds
    after a ``rampup``, in slices of ``slice`` seconds under the interleaved schedule (TPC-C, sysbench)."""

    vus: list[int] = Field(default_factory=lambda: [1])
    duration: float = Field(60.0, gt=0)
    rampup: float = Field(10.0, ge=0)
    # the interleaved schedule (--schedule query): seconds per measured slice; None: the default
    # (workloads/slicing.py); each step then runs ceil(duration / slice) rounds per block
    slice: float | None = None

    @field_validator("vus", mode="before")
    @classmethod
    def _vus(cls, value: Any) -> list[int]:
        return parse_vus(value)

    @field_validator("duration", "rampup", mode="before")
    @classmethod
    def _seconds(cls, value: Any, info: Any) -> float:
        return parse_duration(value, info.field_name)

    @field_validator("slice", mode="before")
    @classmethod
    def _slice(cls, value: Any) -> float | None:
        return None if value is None else check_slice(parse_duration(value, "slice"))

    def why_no_steps(self) -> tuple[str, str] | None:
        """Every step runs as slices (the twins' slices can run side by side)."""
        return None

    @model_validator(mode="after")
    def _slice_fits(self) -> Self:
        check_slice_fits(self.slice, self.duration)
        return self

    def slice_facts(self) -> dict[str, Any]:
        """The interleaved schedule's slices, for the manifest: their length, the rounds of a step (measured and
        warm-up) and the ramp-up."""
        default = DEFAULT_SLICES[self.workload_name]
        return {"slice_s": slice_seconds(self.slice, self.duration, default),
                "rounds_per_step": rounds_for(self.slice, self.duration, default),
                "warmup_rounds_per_step": warmup_rounds_for(self.slice, self.duration, default),
                "rampup_s": self.rampup}


class TpccOptions(SlicedOptions):
    """Everything a TPC-C run can be told; defaults make a short HammerDB-like sweep."""

    workload_name = "tpcc"
    warehouses: int = Field(1, ge=1, le=10_000)
    keying_thinking: bool = False  # TPC-C keying and thinking times (clause 5.2.5); off like HammerDB's default
    think_scale: float = Field(1.0, gt=0, le=10)  # multiplies the keying/thinking times (e.g. 0.01 for a demo)
    seed: int = 20240607  # data generation; transactions draw from per-VU seeds derived from it and the block
    max_retries: int = Field(20, ge=0, le=1000)  # deadlock / serialization failure / busy retries per transaction
    lock_wait: float = Field(50.0, gt=0)  # MariaDB innodb_lock_wait_timeout, PostgreSQL lock_timeout (s)
    stop_grace: float = Field(120.0, gt=0)  # how long VUs may take to finish after the end of a step
    load_workers: int = Field(0, ge=0, le=64)  # data generation processes (0: min(warehouses, CPUs))
    # procedures: one stored-procedure call per transaction (HammerDB's way; MariaDB, PostgreSQL);
    # statements: client-side SQL (the only mode on SQLite); auto: procedures where available
    mode: Literal["auto", "procedures", "statements"] = "auto"
    # clusters: one (every VU on node 1) or all (VU i on node (i mod N) + 1, round-robin; certification
    # conflicts between nodes then count as deadlocks and are retried). Single servers have one node.
    spread: Literal["one", "all"] = "one"

    @field_validator("lock_wait", "stop_grace", mode="before")
    @classmethod
    def _wait_seconds(cls, value: Any, info: Any) -> float:
        return parse_duration(value, info.field_name)


def parse_options(raw: dict[str, Any], precision: bool = False) -> TpccOptions:
    """Validate the raw option dict; UsageError on the first problem. ``precision``: a ``--precision`` run, whose
    steps are :data:`PRECISION_STEPS` unless the options say otherwise."""
    return TpccOptions.parse({**PRECISION_STEPS, **raw} if precision else raw)
