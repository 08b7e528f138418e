"""Student's t and the normal quantile through ``scipy.special``, and the two t-tests tdebench reports.

``scipy.stats`` costs every run about 0.8 s of CPU to import; these few functions need only ``scipy.special``.
They compute what ``scipy.stats.t``, ``norm``, ``ttest_rel`` and ``ttest_ind(equal_var=False)`` compute (the same
formulas; tests/unit/test_tdist.py compares them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special


def t_ppf(q: np.ndarray | float, df: np.ndarray | float) -> np.ndarray:
    """Quantile of Student's t with ``df`` degrees of freedom (``stats.t.ppf(q, df)``)."""
    return special.stdtrit(df, q)


def t_sf(x: np.ndarray | float, df: np.ndarray | float) -> np.ndarray:
    """Upper tail P(T > x) (``stats.t.sf(x, df)``)."""
    return special.stdtr(df, -np.asarray(x, dtype=float))


def norm_ppf(q: np.ndarray | float) -> np.ndarray:
    """Standard normal quantile (``stats.norm.ppf(q)``)."""
    return special.ndtri(q)


@dataclass(frozen=True)
class TTest:
    """A t-test of a mean (difference): estimate, two-sided p-value and confidence interval; nan where undefined."""

    estimate: float
    pvalue: float
    low: float
    high: float


def _test(estimate: float, se: float, df: float, confidence: float) -> TTest:
    if not (se > 0 and df > 0):  # no spread (or no degrees of freedom): no test, as scipy gives nan
        return TTest(estimate, math.nan, math.nan, math.nan)
    half = float(t_ppf(0.5 + confidence / 2, df)) * se
    return TTest(estimate, float(2 * t_sf(abs(estimate / se), df)), estimate - half, estimate + half)


def paired(other: np.ndarray, base: np.ndarray, confidence: float = 0.95) -> TTest:
    """Paired t-test of mean(other − base) (``stats.ttest_rel(other, base)``)."""
    d = np.asarray(other, dtype=float) - np.asarray(base, dtype=float)
    n = d.size
    se = float(np.std(d, ddof=1)) / math.sqrt(n) if n > 1 else math.nan
    return _test(float(d.mean()), se, n - 1, confidence)


def welch(other: np.ndarray, base: np.ndarray, confidence: float = 0.95) -> TTest:
    """Welch's t-test of mean(other) − mean(base) (``stats.ttest_ind(other, base, equal_var=False)``)."""
    a, b = np.asarray(other, dtype=float), np.asarray(base, dtype=float)
    if a.size < 2 or b.size < 2:
        return TTest(float(a.mean() - b.mean()), math.nan, math.nan, math.nan)
    va, vb = float(np.var(a, ddof=1)) / a.size, float(np.var(b, ddof=1)) / b.size
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1)) if va + vb > 0 else 0.0
    return _test(float(a.mean() - b.mean()), se, df, confidence)
