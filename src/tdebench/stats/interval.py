"""Which estimate, interval and test an overhead gets, and the names recorded for them.

Default (``auto``): below :data:`BOOTSTRAP_MIN_N` trials the t-interval on log values
(:mod:`tdebench.stats.logt`), whose estimate is the ratio of geometric means; from that n on, the
bootstrap of the ratio of medians, which is as close to 95% there and narrower when a few values are
outliers. Non-positive values have no logarithm and always get the bootstrap. The p-value is the
t-test on the logs whenever they exist (paired by block when possible), else Welch on the raw values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from tdebench.stats import tdist
from tdebench.stats.bootstrap import (
    DEFAULT_RESAMPLES, DEFAULT_SEED, CIMethod, bootstrap_ratio_ci, ratio_minus_one,
)
from tdebench.stats.logt import log_t
from tdebench.stats.sequential import ROUND_RULE, lag1, variance_factor

IntervalMethod = Literal["auto", "t-log", "percentile", "bca"]
DEFAULT_METHOD: IntervalMethod = "auto"
BOOTSTRAP_MIN_N = 10  # see benchmarks/stats_coverage.py and tdebench.stats.coverage
WELCH_RAW = "welch"


@dataclass(frozen=True)
class Interval:
    """other/base − 1 with its CI and p-value (fractions), and how each was computed."""

    estimate: float
    ci: tuple[float, float] | None
    p_value: float | None
    ci_method: str  # "" when there is no interval
    p_method: str   # "" when there is no p-value


def welch_p(base: np.ndarray, other: np.ndarray) -> float | None:
    """Two-sided Welch t-test p-value on raw values; None when either side has fewer than 2."""
    if np.asarray(base).size < 2 or np.asarray(other).size < 2:
        return None
    p = tdist.welch(other, base).pvalue
    return p if math.isfinite(p) else None


def bootstrap_name(method: CIMethod, paired: bool) -> str:
    """``bootstrap-percentile-paired`` and the like."""
    return f"bootstrap-{method}" + ("-paired" if paired else "")


def uses_t(method: IntervalMethod, n: int) -> bool:
    """Whether ``method`` asks for the log t-interval at ``n`` trials (when logs exist)."""
    return method == "t-log" or (method == "auto" and n < BOOTSTRAP_MIN_N)


#: the interval of values paired by round (the interleaved OLTP schedule): the t-interval on the log ratios with
#: the AR(1) variance factor of the stopping rule for rounds (:data:`tdebench.stats.sequential.ROUND_RULE`)
ROUNDS_METHOD = "t-log-ar1-paired"


def rounds_interval(base: np.ndarray, other: np.ndarray, confidence: float = 0.95) -> Interval | None:
    """other/base − 1 for values paired by round, in time order: the geometric mean of the ratios with a
    t-interval on the log ratios whose variance is multiplied by (1 + r)/(1 − r), r their bias-corrected lag-1
    autocorrelation (as the stopping rule for rounds does, :mod:`tdebench.stats.sequential`); None without
    logarithms or with fewer than 3 pairs."""
    base, other = np.asarray(base, dtype=float), np.asarray(other, dtype=float)
    n = base.size
    if n < 3 or (base <= 0).any() or (other <= 0).any():
        return None
    d = np.log(other) - np.log(base)
    m, sd = float(d.mean()), float(d.std(ddof=1))
    factor = float(variance_factor(ROUND_RULE, lag1(d), n))
    se = sd * math.sqrt(factor) / math.sqrt(n)
    q = float(tdist.t_ppf(0.5 + confidence / 2, n - 1))
    if se == 0:
        return Interval(math.expm1(m), (math.expm1(m), math.expm1(m)), 0.0 if m else 1.0, ROUNDS_METHOD,
                        ROUNDS_METHOD + "-t")
    p = float(2 * tdist.t_sf(abs(m / se), n - 1))
    return Interval(math.expm1(m), (math.expm1(m - q * se), math.expm1(m + q * se)), p, ROUNDS_METHOD,
                    ROUNDS_METHOD + "-t")


def overhead_interval(base: np.ndarray, other: np.ndarray, *, paired: bool,
                      method: IntervalMethod = DEFAULT_METHOD, seed: int = DEFAULT_SEED,
                      n_resamples: int = DEFAULT_RESAMPLES, confidence: float = 0.95) -> Interval:
    """Estimate, CI and p of other vs base; ``paired`` means both are in the same block order."""
    base, other = np.asarray(base, dtype=float), np.asarray(other, dtype=float)
    lt = log_t(base, other, paired=paired, confidence=confidence)
    p, p_method = (lt.p_value, lt.method) if lt else (welch_p(base, other), WELCH_RAW)
    p_method = p_method if p is not None else ""
    n = min(base.size, other.size)
    if lt is not None and uses_t(method, n):
        return Interval(lt.estimate, lt.ci, p, lt.method, p_method)
    boot: CIMethod = "bca" if method == "bca" else "percentile"
    ci = None
    if n >= 2:  # a CI from a single value per side would be a fake
        ci = bootstrap_ratio_ci(base, other, paired=paired, seed=seed, n_resamples=n_resamples,
                                method=boot, confidence=confidence)
    return Interval(ratio_minus_one(base, other), ci, p, bootstrap_name(boot, paired) if ci else "",
                    p_method)
