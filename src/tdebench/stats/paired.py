"""A phase against its baseline in the same trial, over trials: the geometric mean of the per-trial ratios with a t
interval on their logarithms (a ratio is multiplicative, and its interval so never goes below 0).

Used by the ``encrypt`` workload (its ``encrypt-summary.json``) and by every view of its switching table (terminal,
summary.md, index.html, switching.csv), so that one quantity has one number everywhere."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tdebench.stats.tdist import t_ppf


@dataclass(frozen=True)
class PairedRatio:
    """A phase against its baseline over trials: the geometric-mean ratio and its t interval (None below 2 trials)."""

    n: int
    mean: float
    low: float | None
    high: float | None

    def as_dict(self) -> dict[str, float | int | None]:
        return {"trials": self.n, "geomean_ratio": self.mean, "ci95_low": self.low, "ci95_high": self.high}


def paired_ratio(before: list[float], other: list[float], confidence: float = 0.95) -> PairedRatio | None:
    """Per trial ``other / before``; their geometric mean with a t interval on the log ratios. Trials with a
    baseline or a value of 0 are left out (no ratio, or one no logarithm takes); None when none is left."""
    logs = [math.log(o / b) for b, o in zip(before, other) if b > 0 and o > 0]
    if not logs:
        return None
    mean = sum(logs) / len(logs)
    if len(logs) < 2:
        return PairedRatio(1, math.exp(mean), None, None)
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    half = float(t_ppf(0.5 + confidence / 2, len(logs) - 1)) * sd / math.sqrt(len(logs))
    return PairedRatio(len(logs), math.exp(mean), math.exp(mean - half), math.exp(mean + half))
