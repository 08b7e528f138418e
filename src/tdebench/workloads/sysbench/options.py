"""Options of the sysbench workload, validated from the plan's raw ``workload_options``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from tdebench.workloads.slicing import PRECISION_STEPS
from tdebench.workloads.tpcc.options import SlicedOptions

TESTS = ("oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_insert")


class SysbenchOptions(SlicedOptions):
    """sysbench OLTP tests, thread sweeps (``vus``: sysbench's --threads per step) and table sizes; each test and
    thread count runs ceil(duration / slice) rounds per block under the interleaved schedule, one sysbench run each."""

    workload_name = "sysbench"
    tests: list[str] = Field(default_factory=lambda: ["oltp_read_write"])
    tables: int = Field(4, ge=1, le=1000)
    table_size: int = Field(10_000, ge=1, le=1_000_000_000)
    seed: int = Field(1, ge=0)  # sysbench --rand-seed (plus the block number; 0 = from the clock)
    range_size: int = Field(100, ge=1)
    # sysbench --rand-type: which rows a transaction picks; "special" (sysbench's default) sends three quarters of
    # them to 1% of the rows, a hot set that a small cache still holds; "uniform" spreads them over the whole table
    rand_type: Literal["special", "uniform", "gaussian", "pareto", "zipfian"] = "special"
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

    @field_validator("duration", "rampup", "slice")
    @classmethod
    def _whole_seconds(cls, value: float | None) -> float | None:
        if value is not None and value != int(value):
            raise ValueError(f"sysbench takes whole seconds, e.g. {max(1, round(value))}s")
        return value


def parse_options(raw: dict[str, Any], precision: bool = False) -> SysbenchOptions:
    """Validate the raw option dict; UsageError naming the option on the first problem. ``precision``: a
    ``--precision`` run, whose steps are :data:`PRECISION_STEPS` unless the options say otherwise."""
    return SysbenchOptions.parse({**PRECISION_STEPS, **raw} if precision else raw)
