"""A phase against its baseline in the same trial, over trials: the mean of the per-trial ratios with a t interval.

Used by the ``encrypt`` workload (its ``encrypt-summary.json``) and by every view of its switching table (terminal,
summary.md, index.html, switching.csv), so that one quantity has one number everywhere."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats as st


@dataclass(frozen=True)
class PairedRatio:
    """A phase against its baseline over trials: mean ratio and its t interval (None below 2 trials)."""

    n: int
    mean: float
    low: float | None
    high: float | None

    def as_dict(self) -> dict[str, float | int | None]:
        return {"trials": self.n, "mean_ratio": self.mean, "ci95_low": self.low, "ci95_high": self.high}


def paired_ratio(before: list[float], other: list[float], confidence: float = 0.95) -> PairedRatio | None:
    """Per trial ``other / before``; their mean with a t interval. None when no trial has a baseline above 0."""
    ratios = [o / b for b, o in zip(before, other) if b > 0]
    if not ratios:
        return None
    mean = sum(ratios) / len(ratios)
    if len(ratios) < 2:
        return PairedRatio(1, mean, None, None)
    sd = math.sqrt(sum((r - mean) ** 2 for r in ratios) / (len(ratios) - 1))
    half = float(st.t.ppf(0.5 + confidence / 2, len(ratios) - 1)) * sd / math.sqrt(len(ratios))
    return PairedRatio(len(ratios), mean, mean - half, mean + half)
