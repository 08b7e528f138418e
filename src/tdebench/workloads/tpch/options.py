"""TPC-H's options: scale factor, tests and throughput streams.

They are given with ``--sf``, ``--tests`` and ``--streams`` (or the experiment file's ``[run]`` keys of the same
names, or ``[run.options]``); the run's ``--query-timeout`` applies to every query.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from tdebench.workloads.options import ScaleFactorOption, word_list
from tdebench.workloads.tpch.streams import min_streams

TESTS = ("power", "throughput")


class TpchOptions(ScaleFactorOption):
    """What a TPC-H trial runs: the power and/or throughput test at one scale factor."""

    workload_name = "tpch"
    fix_hint = "use e.g. --sf 0.1 --tests power,throughput --streams 2; see tdebench run --help"
    tests: tuple[str, ...] = ("power",)
    streams: int | None = Field(None, ge=1, le=100)

    @field_validator("tests", mode="before")
    @classmethod
    def _tests(cls, value: Any) -> tuple[str, ...]:
        words = word_list(value)
        unknown = [w for w in words if w not in TESTS]
        if unknown or not words:
            raise ValueError(f"unknown test '{','.join(unknown) or '(none)'}'; use {', '.join(TESTS)}")
        return tuple(t for t in TESTS if t in words)  # spec order: power before throughput

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
