"""Minimum detectable effect and the number of trials needed to resolve an effect.

Two-sample comparison, two-sided alpha, given power, from the (pooled) coefficient of
variation: MDE% ≈ (t_{1−α/2, df} + t_{power, df}) · √2 · CV / √n with df = 2n − 2.
"""

from __future__ import annotations

import math

from tdebench.stats.tdist import norm_ppf, t_ppf

MAX_TRIALS = 1_000_000


def mde_pct(cv_pct: float | None, n: int, *, alpha: float = 0.05,
            power: float = 0.8) -> float | None:
    """Smallest effect (in %) detectable with n trials per config; None when n < 2."""
    if cv_pct is None or n < 2 or not math.isfinite(cv_pct):
        return None
    df = 2 * n - 2
    t_sum = float(t_ppf(1 - alpha / 2, df) + t_ppf(power, df))
    return t_sum * math.sqrt(2.0) * cv_pct / math.sqrt(n)


def trials_needed(effect_pct: float, cv_pct: float | None, *, alpha: float = 0.05,
                  power: float = 0.8, max_trials: int = MAX_TRIALS) -> int | None:
    """Trials per config for which the MDE drops to ``effect_pct``.

    None when the CV is unknown, the effect is not positive, or more than ``max_trials``
    would be needed.
    """
    effect = abs(effect_pct)
    if cv_pct is None or effect <= 0 or not math.isfinite(cv_pct):
        return None
    if cv_pct <= 0:
        return 2
    z_sum = float(norm_ppf(1 - alpha / 2) + norm_ppf(power))
    n = max(2, math.floor(2 * (z_sum * cv_pct / effect) ** 2))
    if n > max_trials:
        return None
    while (mde := mde_pct(cv_pct, n, alpha=alpha, power=power)) is not None and mde > effect:
        n += 1
        if n > max_trials:
            return None
    return n
