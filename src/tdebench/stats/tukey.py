"""Tukey–Kramer HSD for k groups, as ``scipy.stats.tukey_hsd`` computes it, with its studentized range
probabilities taken from a table per (k, df) instead of one numerical double integral per pair.

scipy evaluates ``studentized_range.sf`` by adaptive quadrature, about 7 ms a value: a report of twelve configs
(66 pairs a step, 46 steps, twice) spent 40 s there. Every step of a run with equal trials per config shares k and
df, so the exact values are computed once on a grid of q (:data:`GRID` points, equally spaced in log(1 + q) up to
the q whose tail is :data:`TAIL`) and the p-value of a pair is interpolated in log(sf) (monotone cubic); beyond the
grid it is computed exactly. ``tests/unit/test_tukey.py`` holds the table to scipy's own values (absolute error
below 2e-4, relative below 0.1% where p > 1e-5; intervals identical)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

GRID = 80
TAIL = 1e-7
CONFIDENCE = 0.95
#: calls of one (k, df) answered exactly before its table is built (a run of one or two steps needs none)
EXACT_CALLS = 2
_calls: dict[tuple[int, float], int] = {}


def _range_dist():  # noqa: ANN202 - scipy's distribution object
    from scipy.stats import studentized_range  # noqa: PLC0415 - scipy.stats is imported only when needed

    return studentized_range


@dataclass(frozen=True)
class _Table:
    """log(sf) of the studentized range at ``u = log1p(q)`` for q in [0, q_top]."""

    k: int
    df: float
    q_top: float
    interpolate: object  # scipy.interpolate.PchipInterpolator

    def sf(self, q: np.ndarray) -> np.ndarray:
        inside = q <= self.q_top
        out = np.empty_like(q, dtype=float)
        out[inside] = np.exp(self.interpolate(np.log1p(q[inside])))  # type: ignore[operator]
        if (~inside).any():
            out[~inside] = _range_dist().sf(q[~inside], self.k, self.df)
        return np.clip(out, 0.0, 1.0)


@functools.lru_cache(maxsize=64)
def _table(k: int, df: float) -> _Table:
    from scipy.interpolate import PchipInterpolator  # noqa: PLC0415

    dist = _range_dist()
    q_top = float(critical_q(k, df))
    while float(dist.sf(q_top, k, df)) > TAIL and q_top < 1e4:  # the tail's end, by doubling (heavy at small df)
        q_top *= 2
    u = np.linspace(0.0, math.log1p(q_top), GRID)
    q = np.expm1(u)
    sf = np.array([1.0] + [float(dist.sf(x, k, df)) for x in q[1:]])
    return _Table(k, df, q_top, PchipInterpolator(u, np.log(np.maximum(sf, 1e-300))))


@functools.lru_cache(maxsize=64)
def critical_q(k: int, df: float, confidence: float = CONFIDENCE) -> float:
    """The studentized range's ``confidence`` quantile for k groups and df degrees of freedom (cached)."""
    return float(_range_dist().ppf(confidence, k, df))


def studentized_range_sf(q: np.ndarray, k: int, df: float) -> np.ndarray:
    """P(Q > q) for the studentized range of k groups with df degrees of freedom: exact for the first
    :data:`EXACT_CALLS` calls of a (k, df), then from its table."""
    q = np.asarray(q, dtype=float)
    key = (int(k), float(df))
    _calls[key] = _calls.get(key, 0) + 1
    if _calls[key] <= EXACT_CALLS:
        return np.clip(_range_dist().sf(q, *key), 0.0, 1.0)
    return _table(*key).sf(q)


@dataclass(frozen=True)
class TukeyHsd:
    """Pairwise mean differences ``mean[i] − mean[j]``, their simultaneous intervals and adjusted p-values."""

    statistic: np.ndarray
    low: np.ndarray
    high: np.ndarray
    pvalue: np.ndarray


def tukey_hsd(groups: Sequence[np.ndarray], confidence: float = CONFIDENCE) -> TukeyHsd:
    """Tukey–Kramer HSD over ``groups`` (each of at least 2 values), as ``scipy.stats.tukey_hsd``."""
    arrays = [np.asarray(g, dtype=float) for g in groups]
    k = len(arrays)
    sizes = np.array([a.size for a in arrays], dtype=float)
    means = np.array([a.mean() for a in arrays])
    df = float(sizes.sum() - k)
    mse = sum(float(((a - a.mean()) ** 2).sum()) for a in arrays) / df
    statistic = means[:, None] - means[None, :]
    stand_err = np.sqrt(mse / 2 * (1 / sizes[:, None] + 1 / sizes[None, :]))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.abs(statistic) / stand_err
    pvalue = np.ones_like(q)  # the diagonal (q = 0) and pairs without spread (q undefined): p = 1
    upper = np.triu(np.isfinite(q), 1)  # q is symmetric: each pair's probability once, by quadrature or table
    pvalue[upper] = studentized_range_sf(q[upper], k, df)
    pvalue.T[upper] = pvalue[upper]
    margin = critical_q(k, df, confidence) * stand_err
    return TukeyHsd(statistic, statistic - margin, statistic + margin, pvalue)
