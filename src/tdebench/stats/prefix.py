"""Statistics of every prefix of a stream of per-block values, and where a stopping rule would stop if the stream
went on: what ``--precision`` predicts ("about N blocks in all") from the blocks seen so far.

:func:`first_passages` continues the stream observed so far with simulated blocks (Gaussian, AR(1), the noise and
correlation drawn from what their estimates allow) and returns, per simulated path, the first block count at which a
rule's half-width meets the target. Its median is the prediction and its 10th and 90th percentiles the 80% range.
The rule stops at the *first* block its half-width falls below the target, and that half-width fluctuates with the
sd and the lag-1 autocorrelation of the blocks so far; a prediction from the point where the half-width at
today's estimates would cross the target came out 30–50% too high once the estimates settled, and too low in
the first blocks (benchmarks/needed_estimate.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

#: simulated continuations per prediction, and the longest one (beyond it, the deterministic crossing is used)
SIM_PATHS = 128
SIM_CAP = 2048
#: blocks' worth of weight the lag-1 autocorrelation's shrinkage towards 0 gives the prior (:func:`_draws`)
RHO_PRIOR_N = 10


class PrefixStats(NamedTuple):
    """Mean, sd (n − 1) and lag-1 autocorrelation of every prefix d[..., :n] (arrays)."""

    n: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    r1: np.ndarray


@dataclass(frozen=True)
class PrefixSums:
    """Running sums carried from one chunk of a stream to the next (shifted by its first value)."""

    shift: np.ndarray
    n: int
    s1: np.ndarray
    s2: np.ndarray
    s12: np.ndarray
    last: np.ndarray


def prefix_stats(d: np.ndarray, carry: PrefixSums | None = None) -> tuple[PrefixStats, PrefixSums]:
    """Statistics of every prefix of d along its last axis, continuing from ``carry``.

    For streams simulated chunk by chunk: pass the returned carry with the next chunk.
    ``r1`` is 0 below n = 3 and where the values do not vary.
    """
    d = np.asarray(d, dtype=float)
    if carry is None:
        zero = np.zeros(d.shape[:-1])
        carry = PrefixSums(d[..., 0].copy(), 0, zero, zero, zero, zero)
    x = d - carry.shift[..., None]  # the stream's first value becomes 0: no cancellation
    prev = np.concatenate([carry.last[..., None], x[..., :-1]], axis=-1)
    c1 = carry.s1[..., None] + np.cumsum(x, axis=-1)
    c2 = carry.s2[..., None] + np.cumsum(x * x, axis=-1)
    c12 = carry.s12[..., None] + np.cumsum(x * prev, axis=-1)  # x_1 = 0, so no lag term for i = 1
    n = np.arange(carry.n + 1, carry.n + d.shape[-1] + 1, dtype=float)
    mx = c1 / n
    with np.errstate(invalid="ignore", divide="ignore"):
        ss = np.maximum(c2 - n * mx * mx, 0.0)  # sum of squared deviations
        sd = np.where(n >= 2, np.sqrt(ss / np.maximum(n - 1, 1)), np.nan)
        lag = c12 - mx * (2 * c1 - x) + (n - 1) * mx * mx  # Σ_{i≥2} (x_i − m)(x_{i−1} − m)
        r1 = np.where((n >= 3) & (ss > 0), lag / ss, 0.0)
    out = PrefixStats(np.broadcast_to(n, mx.shape), mx + carry.shift[..., None], sd, r1)
    return out, PrefixSums(carry.shift, carry.n + d.shape[-1], c1[..., -1], c2[..., -1], c12[..., -1],
                      x[..., -1])


def lag1(d: np.ndarray) -> float:
    """Lag-1 autocorrelation Σ(d_i − m)(d_{i−1} − m) / Σ(d_i − m)²; 0 below 3 values or if flat."""
    x = np.asarray(d, dtype=float)
    if x.size < 3:
        return 0.0
    x = x - x.mean()
    ss = float(np.dot(x, x))
    return float(np.dot(x[1:], x[:-1]) / ss) if ss > 0 else 0.0


def _draws(d: np.ndarray, rng: np.random.Generator, paths: int, r_max: float) -> tuple[np.ndarray, np.ndarray]:
    """(σ, ρ) per path: σ² drawn from the scaled inverse chi-square its sample variance allows (n − 1 degrees of
    freedom); ρ the lag-1 autocorrelation corrected for its bias (−1/n at ρ = 0), kept in 0…r_max (a stopping
    rule never counts a negative correlation) and shrunk towards 0 by n / (n + :data:`RHO_PRIOR_N`): at a few
    blocks it is mostly noise, and paired blocks are mostly uncorrelated (benchmarks/needed_estimate.py compares
    the choices)."""
    n = d.size
    sd, r1 = float(d.std(ddof=1)), lag1(d)
    sigma = sd * np.sqrt((n - 1) / rng.chisquare(n - 1, paths))
    rho = min(max(r1 + (1 + 4 * max(r1, 0.0)) / n, 0.0), r_max) * n / (n + RHO_PRIOR_N)
    return sigma, np.full(paths, rho)


def first_passages(d: np.ndarray, met: Callable[[PrefixStats], np.ndarray], *, r_max: float = 0.9,
                   paths: int = SIM_PATHS, cap: int = SIM_CAP) -> np.ndarray:
    """Per simulated path, the first total block count after ``d`` at which ``met`` (a rule's test on the
    statistics of every prefix, True where the target is met) holds; inf where it does not within ``cap`` blocks.

    The paths continue ``d`` itself: the rule sees the blocks observed so far and the simulated ones after them.
    Reproducible: the random numbers are drawn from the data's length and values."""
    d = np.asarray(d, dtype=float)
    n = d.size
    seed = [n, *np.frombuffer(np.round(d, 12).tobytes(), dtype=np.uint32)[:64].tolist()]
    rng = np.random.default_rng(seed)
    sigma, rho = _draws(d, rng, paths, r_max)
    mean = float(d.mean())
    _, carry = prefix_stats(np.broadcast_to(d, (paths, n)))
    prev = np.full(paths, d[-1] - mean)
    stops = np.full(paths, np.inf)
    done, chunk = n, max(16, n)
    innovation = sigma * np.sqrt(1 - rho * rho)
    while done < cap and np.isinf(stops).any():
        length = min(chunk, cap - done)
        eps = rng.normal(size=(paths, length)) * innovation[:, None]
        x = _ar1(eps, rho, prev)
        prev = x[:, -1]
        st, carry = prefix_stats(mean + x, carry)
        ok = met(st)
        hit = ok.any(axis=1) & np.isinf(stops)
        stops[hit] = done + 1 + ok[hit].argmax(axis=1)
        done += length
        chunk *= 2
    return stops


def _ar1(eps: np.ndarray, rho: np.ndarray, prev: np.ndarray) -> np.ndarray:
    """x_j = ρ·x_{j−1} + ε_j along each row (path), from x_0 = ``prev``: the recursion scipy.signal.lfilter runs
    per path, column by column over all paths at once (no import of scipy.signal and scipy.stats, no call per
    path), the same floating-point operations in the same order."""
    x = np.empty_like(eps)
    last = prev
    for j in range(eps.shape[1]):
        last = x[:, j] = eps[:, j] + rho * last
    return x

