"""TPC-H's options: scale factor, tests and throughput streams.

They are given with ``--sf``, ``--tests`` and ``--streams`` (or the experiment file's ``[run]`` keys of the same
names, or ``[run.options]``); the run's ``--query-timeout`` applies to every query.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from tdebench.workloads.options import ScaleFactorOption, word_list
from tdebench.workloads.tpch.streams import min_streams

TESTS = ("power", "throughput")


class TpchOptions(ScaleFactorOption):
    """What a TPC-H trial runs: the power and/or throughput test at one scale factor."""

    workload_name = "tpch"
    fix_hint = "use e.g. --sf 0.1 --tests power,throughput --streams 2; see tdebench run --help"
    tests: tuple[str, ...] = ("power",)
    streams: int | None = Field(None, ge=1, le=100)
    #: a subset of the 22 queries for the power test (e.g. scan-heavy ones for a memory sweep at a large SF);
    #: empty: all 22. With a subset the power test's "total" is theirs and Power@Size is not computed.
    queries: tuple[int, ...] = ()

    @field_validator("queries", mode="before")
    @classmethod
    def _queries(cls, value: Any) -> tuple[int, ...]:
        items = [w for w in word_list(value)] if not isinstance(value, int) else [str(value)]
        numbers = []
        for item in items:
            text = item.lstrip("q")
            if not text.isdigit() or not 1 <= int(text) <= 22:
                raise ValueError(f"'{item}' is not a TPC-H query number; give numbers 1 to 22, e.g. 1,6,14")
            numbers.append(int(text))
        return tuple(sorted(set(numbers)))

    @model_validator(mode="after")
    def _queries_power_only(self) -> "TpchOptions":
        if self.queries and "throughput" in self.tests:
            raise ValueError("queries selects queries of the power test only; leave out throughput or queries")
        return self

    @field_validator("tests", mode="before")
    @classmethod
    def _tests(cls, value: Any) -> tuple[str, ...]:
        words = word_list(value)
        unknown = [w for w in words if w not in TESTS]
        if unknown or not words:
            raise ValueError(f"unknown test '{','.join(unknown) or '(none)'}'; use {', '.join(TESTS)}")
        return tuple(t for t in TESTS if t in words)  # spec order: power before throughput

    def why_no_steps(self) -> tuple[str, str] | None:
        """The power test runs query by query; the throughput test alone has no steps."""
        if "power" in self.tests:
            return None
        return ("TPC-H's throughput test runs whole, with no steps two twins can run side by side",
                "add the power test (--tests power or power,throughput), or use --schedule query or block")

    def why_no_turns(self) -> tuple[str, str] | None:
        """The power test's queries and refreshes are timed by tdebench's clock; the throughput test's streams are
        timed by threads of their own."""
        if self.tests == ("power",):
            return None
        return ("TPC-H's throughput test runs in threads that keep their own time, which goes on while --schedule "
                "turns holds their server", "run the power test alone (--tests power), or use --schedule duet")

    @property
    def stream_count(self) -> int:
        """Throughput streams: as asked, else the spec minimum for the SF (at least 2)."""
        return self.streams if self.streams is not None else min_streams(self.sf)

    @property
    def sets_per_trial(self) -> int:
        """Update sets one trial consumes: 1 for the power test, S for the throughput test."""
        return (1 if "power" in self.tests else 0) + (self.stream_count if "throughput" in self.tests else 0)

    def update_sets(self, block: int) -> list[int]:
        """The update sets of ``block``: disjoint from every other block's, identical for every config."""
        k = self.sets_per_trial
        return list(range(block * k + 1, block * k + k + 1))


def parse_options(raw: dict[str, Any]) -> TpchOptions:
    """The validated options; UsageError naming the key and the fix otherwise."""
    return TpchOptions.parse(raw)
