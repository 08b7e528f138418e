"""A/A calibration: how often two identical twins come out "different" (the false-positive rate).

In an A/A comparison the true overhead is 0, so an interval that excludes 0 is a false positive.
At the nominal 95% level about 5% of them should; the rate is given with its exact
(Clopper–Pearson) interval, so that "5 of 20" is not read as "the tool is 25% wrong".
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol


class HasInterval(Protocol):
    """Anything with an overhead interval in percent (Overhead rows, sequential Decisions)."""

    ci_low_pct: float | None
    ci_high_pct: float | None


@dataclass(frozen=True)
class FalsePositiveRate:
    """Share of A/A intervals that exclude 0, with its exact interval (fractions)."""

    false_positives: int
    comparisons: int          # with an interval
    without_interval: int     # left out: no interval to judge
    rate: float
    ci_low: float
    ci_high: float
    nominal: float
    confidence: float
    p_value: float            # two-sided exact binomial test of rate = nominal

    @property
    def consistent_with_nominal(self) -> bool:
        """The nominal rate lies inside the interval of the observed one."""
        return self.ci_low <= self.nominal <= self.ci_high

    def text(self) -> str:
        """``2 of 20 A/A comparisons (10.0%, 95% CI 1.2–31.7%) excluded 0; nominal 5%.``"""
        tail = (f" ({self.without_interval} without an interval left out)"
                if self.without_interval else "")
        verdict = ("consistent with" if self.consistent_with_nominal else
                   "above" if self.ci_low > self.nominal else "below")
        return (f"{self.false_positives} of {self.comparisons} A/A comparisons "
                f"({self.rate:.1%}, {self.confidence:.0%} CI {self.ci_low:.1%}–{self.ci_high:.1%}) "
                f"had an interval excluding 0: {verdict} the nominal {self.nominal:.0%}{tail}.")


def excludes_zero(row: HasInterval) -> bool | None:
    """True when the interval excludes 0, None when there is no interval."""
    lo, hi = row.ci_low_pct, row.ci_high_pct
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    return lo > 0 or hi < 0


def false_positive_rate(rows: Iterable[HasInterval], *, nominal: float = 0.05,
                        confidence: float = 0.95) -> FalsePositiveRate:
    """False-positive rate of A/A comparisons (rows whose true overhead is 0).

    ``nominal`` is 1 − the confidence level of the rows' intervals. Rows without an interval are
    counted apart. ValueError when no row has one.
    """
    verdicts = [excludes_zero(r) for r in rows]
    judged = [v for v in verdicts if v is not None]
    if not judged:
        raise ValueError("no A/A comparison has an interval; run at least 2 trials per config")
    k, n = sum(judged), len(judged)
    from scipy import stats  # noqa: PLC0415 - imported when an A/A series is summed up, not by every run

    test = stats.binomtest(k, n, nominal)
    ci = test.proportion_ci(confidence_level=confidence, method="exact")
    return FalsePositiveRate(k, n, len(verdicts) - n, k / n, float(ci.low), float(ci.high),
                             nominal, confidence, float(test.pvalue))
