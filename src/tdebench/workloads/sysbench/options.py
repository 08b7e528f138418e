"""Options of the sysbench workload, validated from the plan's raw ``workload_options``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from tdebench.workloads.options import WorkloadOptions
from tdebench.workloads.slicing import PRECISION_STEPS, check_slice, check_slice_fits
from tdebench.workloads.tpcc.options import parse_duration, parse_vus

TESTS = ("oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_insert")


class SysbenchOptions(WorkloadOptions):
    """sysbench OLTP tests, thread sweeps and table sizes."""

    workload_name = "sysbench"
    tests: list[str] = Field(default_factory=lambda: ["oltp_read_write"])
    vus: list[int] = Field(default_factory=lambda: [1])  # sysbench --threads per step
    duration: float = Field(60.0, gt=0)
    rampup: float = Field(10.0, ge=0)
    tables: int = Field(4, ge=1, le=1000)
    table_size: int = Field(10_000, ge=1, le=1_000_000_000)
    seed: int = Field(1, ge=0)  # sysbench --rand-seed (plus the block number; 0 = from the clock)
    range_size: int = Field(100, ge=1)
    # the interleaved schedule (--schedule query): seconds per measured slice (one sysbench run each); None: the
    # default (workloads/slicing.py); each test and thread count then runs ceil(duration / slice) rounds per block
    slice: float | None = None
    # clusters: one (every thread on node 1) or all (sysbench's threads round-robin over every node's socket)
    spread: Literal["one", "all"] = "one"

    @field_validator("tests", mode="before")
    @classmethod
    def _tests(cls, value: Any) -> list[str]:
        items = value if isinstance(value, (list, tuple)) else [p.strip() for p in str(value).split(",") if p.strip()]
        unknown = [t for t in items if t not in TESTS]
        if unknown or not items:
            raise ValueError(f"unknown sysbench test '{','.join(map(str, unknown)) or '(none)'}'; "
                             f"use one or more of: {', '.join(TESTS)}")
        if len(set(items)) != len(items):
            raise ValueError("a test is listed twice; list each test once")
        return list(items)

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

    @field_validator("duration", "rampup", "slice")
    @classmethod
    def _whole_seconds(cls, value: float | None) -> float | None:
        if value is not None and value != int(value):
            raise ValueError(f"sysbench takes whole seconds, e.g. {max(1, round(value))}s")
        return value

    def why_no_steps(self) -> tuple[str, str] | None:
        """Every step runs as slices (the twins' slices can run side by side)."""
        return None

    @model_validator(mode="after")
    def _slice_fits(self) -> "SysbenchOptions":
        check_slice_fits(self.slice, self.duration)
        return self


def parse_options(raw: dict[str, Any], precision: bool = False) -> SysbenchOptions:
    """Validate the raw option dict; UsageError naming the option on the first problem. ``precision``: a
    ``--precision`` run, whose steps are :data:`PRECISION_STEPS` unless the options say otherwise."""
    return SysbenchOptions.parse({**PRECISION_STEPS, **raw} if precision else raw)
