"""A mergeable log-bucketed latency histogram (1% resolution) with exact count, sum, min and max."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

_BASE = 1.01
_LOG_BASE = math.log(_BASE)
_FLOOR_NS = 1_000  # everything below 1 microsecond goes into the first bucket


@dataclass
class Histogram:
    """Latencies in nanoseconds; percentiles are bucket midpoints (within 0.5% of the true value)."""

    buckets: dict[int, int] = field(default_factory=dict)
    count: int = 0
    total_ns: int = 0
    min_ns: int = 0
    max_ns: int = 0

    def add(self, ns: int) -> None:
        index = 0 if ns <= _FLOOR_NS else int(math.log(ns / _FLOOR_NS) / _LOG_BASE) + 1
        self.buckets[index] = self.buckets.get(index, 0) + 1
        self.min_ns = ns if self.count == 0 else min(self.min_ns, ns)
        self.max_ns = max(self.max_ns, ns)
        self.count += 1
        self.total_ns += ns

    def merge(self, other: "Histogram") -> None:
        for index, n in other.buckets.items():
            self.buckets[index] = self.buckets.get(index, 0) + n
        if other.count:
            self.min_ns = other.min_ns if self.count == 0 else min(self.min_ns, other.min_ns)
            self.max_ns = max(self.max_ns, other.max_ns)
        self.count += other.count
        self.total_ns += other.total_ns

    @staticmethod
    def _value(index: int) -> float:
        if index == 0:
            return _FLOOR_NS
        low = _FLOOR_NS * _BASE ** (index - 1)
        return low * math.sqrt(_BASE)

    def percentile(self, pct: float) -> float | None:
        """The ``pct`` percentile in seconds (nearest rank), None when empty."""
        if not self.count:
            return None
        rank = max(1, math.ceil(pct / 100 * self.count))
        seen = 0
        for index in sorted(self.buckets):
            seen += self.buckets[index]
            if seen >= rank:
                value = min(max(self._value(index), self.min_ns), self.max_ns)
                return value / 1e9
        return self.max_ns / 1e9

    @property
    def mean(self) -> float | None:
        return self.total_ns / self.count / 1e9 if self.count else None
