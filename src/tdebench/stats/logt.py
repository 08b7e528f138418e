"""t-intervals on log values: the overhead as a ratio of geometric means.

With lognormal timing noise the logs are normal, so a t-interval on them has its nominal coverage at
any n ≥ 2, where a bootstrap at n = 3 covers far less (see ``benchmarks/stats_coverage.py``).
Paired (same blocks): one-sample t on the per-block log ratios log(other_b / base_b).
Unpaired: Welch's t on log(other) vs log(base). Both are back-transformed: exp(·) − 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tdebench.stats import tdist

PAIRED = "t-log-paired"
WELCH = "welch-log"
_FLAT_SD = 1e-9  # log-scale sd below this is rounding noise of constant values


@dataclass(frozen=True)
class LogT:
    """Ratio of geometric means − 1 with its t-interval and p-value (fractions, not percent)."""

    estimate: float
    ci: tuple[float, float]
    p_value: float | None
    method: str


def _flat(x: np.ndarray) -> bool:
    return x.size < 2 or float(np.std(x, ddof=1)) <= _FLAT_SD


def log_t(base: np.ndarray, other: np.ndarray, *, paired: bool,
          confidence: float = 0.95) -> LogT | None:
    """other/base − 1 as a ratio of geometric means, t-interval and two-sided p on the logs.

    ``paired`` needs equal sizes in block order. None when a side has fewer than 2 values or a
    value is not positive (no logarithm). When the logs do not vary at all the interval is the
    point itself and there is no p-value.
    """
    b, o = np.asarray(base, dtype=float), np.asarray(other, dtype=float)
    if min(b.size, o.size) < 2 or (paired and b.size != o.size) or (b <= 0).any() or (o <= 0).any():
        return None
    lb, lo = np.log(b), np.log(o)
    diff = float(lo.mean() - lb.mean())
    method = PAIRED if paired else WELCH
    if _flat(lo - lb) if paired else (_flat(lb) and _flat(lo)):
        return LogT(math.expm1(diff), (math.expm1(diff), math.expm1(diff)), None, method)
    res = tdist.paired(lo, lb, confidence) if paired else tdist.welch(lo, lb, confidence)
    p = res.pvalue
    return LogT(math.expm1(diff), (math.expm1(res.low), math.expm1(res.high)), p if math.isfinite(p) else None,
                method)
