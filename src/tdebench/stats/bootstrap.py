"""Bootstrap confidence intervals for a ratio of two samples and for a median.

All functions take an explicit seed and build ``numpy.random.default_rng(seed)`` themselves,
so every interval is reproducible on its own, whatever else was computed before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

CIMethod = Literal["percentile", "bca"]
Statistic = Literal["median", "mean"]
DEFAULT_SEED = 20_251_120
DEFAULT_RESAMPLES = 10_000
_CHUNK_CELLS = 2_000_000  # resampled values held in memory at once


def _center(stat: Statistic) -> Callable[..., np.ndarray]:
    return np.median if stat == "median" else np.mean


def ratio_minus_one(base: np.ndarray, other: np.ndarray, stat: Statistic = "median") -> float:
    """other/base − 1 of the medians (or means)."""
    f = _center(stat)
    b = float(f(base))
    return float(f(other)) / b - 1.0 if b != 0 else float("nan")


def _resample_ratios(base: np.ndarray, other: np.ndarray, paired: bool, rng: np.random.Generator,
                     n_resamples: int, stat: Statistic) -> np.ndarray:
    """Bootstrap distribution of other/base − 1 (paired: one index set for both)."""
    f = _center(stat)
    nb, no = base.size, other.size
    chunk = max(1, _CHUNK_CELLS // max(nb, no, 1))
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        ib = rng.integers(0, nb, size=(size, nb))
        io = ib if paired else rng.integers(0, no, size=(size, no))
        with np.errstate(divide="ignore", invalid="ignore"):
            out[start:start + size] = f(other[io], axis=1) / f(base[ib], axis=1) - 1.0
    return out


def _jackknife_acceleration(base: np.ndarray, other: np.ndarray, paired: bool,
                            stat: Statistic) -> float:
    """BCa acceleration from leave-one-out estimates (per sample, combined as scipy does)."""
    if paired:
        groups = [[ratio_minus_one(np.delete(base, i), np.delete(other, i), stat)
                   for i in range(base.size)]]
    else:
        groups = [[ratio_minus_one(np.delete(base, i), other, stat) for i in range(base.size)],
                  [ratio_minus_one(base, np.delete(other, i), stat) for i in range(other.size)]]
    nums, dens = 0.0, 0.0
    for g in groups:
        theta = np.asarray(g, dtype=float)
        n = theta.size
        u = (n - 1) * (theta.mean() - theta)
        nums += float((u ** 3).sum()) / n ** 3
        dens += float((u ** 2).sum()) / n ** 2
    return nums / (6.0 * dens ** 1.5) if dens > 0 else 0.0


def _bca_levels(boot: np.ndarray, theta_hat: float, accel: float,
                confidence: float) -> tuple[float, float] | None:
    """Adjusted percentile levels for BCa, or None when degenerate."""
    from scipy import special  # here: reading a run directory (stats.load) needs no SciPy

    below = (np.count_nonzero(boot < theta_hat) + np.count_nonzero(boot <= theta_hat)) / 2
    z0 = float(special.ndtri(below / boot.size))
    if not np.isfinite(z0):
        return None
    levels = []
    for alpha in ((1 - confidence) / 2, (1 + confidence) / 2):
        za = float(special.ndtri(alpha))
        levels.append(float(special.ndtr(z0 + (z0 + za) / (1 - accel * (z0 + za)))))
    return levels[0], levels[1]


def bootstrap_ratio_ci(base: np.ndarray, other: np.ndarray, *, paired: bool = False,
                       seed: int = DEFAULT_SEED, n_resamples: int = DEFAULT_RESAMPLES,
                       method: CIMethod = "percentile", stat: Statistic = "median",
                       confidence: float = 0.95) -> tuple[float, float] | None:
    """CI of other/base − 1 (as a fraction). Paired resamples blocks (same index in both).

    Returns None when either sample is empty, or when too few resamples are finite.
    BCa falls back to the percentile interval when its correction is degenerate.
    """
    base, other = np.asarray(base, dtype=float), np.asarray(other, dtype=float)
    if base.size == 0 or other.size == 0 or (paired and base.size != other.size):
        return None
    rng = np.random.default_rng(seed)
    boot = _resample_ratios(base, other, paired, rng, n_resamples, stat)
    boot = boot[np.isfinite(boot)]
    if boot.size < n_resamples / 2:
        return None
    levels = ((1 - confidence) / 2, (1 + confidence) / 2)
    if method == "bca" and base.size > 1 and other.size > 1:
        theta_hat = ratio_minus_one(base, other, stat)
        accel = _jackknife_acceleration(base, other, paired, stat)
        levels = _bca_levels(boot, theta_hat, accel, confidence) or levels
    low, high = np.quantile(boot, levels)
    return float(low), float(high)


def bootstrap_median_ci(values: np.ndarray, *, seed: int = DEFAULT_SEED,
                        n_resamples: int = DEFAULT_RESAMPLES,
                        confidence: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the median of one sample (None when empty)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return None
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // values.size)
    meds = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        meds[start:start + size] = np.median(values[rng.integers(0, values.size, (size, values.size))],
                                             axis=1)
    low, high = np.quantile(meds, ((1 - confidence) / 2, (1 + confidence) / 2))
    return float(low), float(high)
