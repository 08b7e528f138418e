"""What ``tdebench script`` generates: dialect, test, streams, scale factor and Q15 form, validated
(:func:`plan_scripts`)."""

from __future__ import annotations

from dataclasses import dataclass

from tdebench.errors import UsageError
from tdebench.workloads.tpch.dialects import Q15_MODES, check_dialect
from tdebench.workloads.tpch.streams import min_streams

TESTS = ("power", "throughput")
MAX_STREAMS = 1000
SCRIPT_VERSION = "v1"


@dataclass(frozen=True)
class ScriptPlan:
    """What to generate."""

    dialect: str
    test: str
    streams: tuple[int, ...]
    sf: float
    q15: str = "with"

    def script_name(self, stream: int) -> str:
        return f"stream{stream:02d}.sql"

    def log_name(self, stream: int) -> str:
        return f"stream{stream:02d}.log"


def plan_scripts(dialect: str, test: str, streams: int | None, sf: float, q15: str = "with") -> ScriptPlan:
    """Validate the options; UsageError on bad input."""
    dialect = check_dialect(dialect)
    test = test.strip().lower()
    if test not in TESTS:
        raise UsageError(f"unknown test '{test}'", "use --test power or --test throughput")
    if not sf > 0:
        raise UsageError(f"scale factor must be positive, not {sf}", "pass e.g. --sf 1")
    if q15 not in Q15_MODES:
        raise UsageError(f"unknown Q15 form '{q15}'", "use --q15 with or --q15 view")
    if test == "power":
        numbers: tuple[int, ...] = (0,)
    else:
        count = min_streams(sf) if streams is None else streams
        if not 1 <= count <= MAX_STREAMS:
            raise UsageError(f"--streams must be between 1 and {MAX_STREAMS}, not {count}",
                             "pass the number of throughput streams, e.g. --streams 2")
        numbers = tuple(range(1, count + 1))
    return ScriptPlan(dialect, test, numbers, float(sf), q15)


__all__ = ["MAX_STREAMS", "SCRIPT_VERSION", "TESTS", "ScriptPlan", "plan_scripts"]
