"""Comparisons across three or more configs of one engine: ANOVA, Tukey HSD, Kruskal–Wallis."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tdebench.stats.load import Measurements, SeriesKey
from tdebench.stats.tukey import tukey_hsd


def _stats() -> Any:
    """scipy.stats, imported when a run has three configs or more (it costs ~0.8 s of CPU to import)."""
    from scipy import stats  # noqa: PLC0415

    return stats


SKEW_LIMIT = 1.0
ALL_CONFIGS = "all configs"
ENCRYPTED_ONLY = "encrypted configs"
SHAPIRO_ALPHA = 0.05


@dataclass(frozen=True)
class TukeyPair:
    """One pairwise Tukey HSD comparison: mean(b) − mean(a) with its CI and adjusted p."""

    config_a: str
    config_b: str
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float


@dataclass(frozen=True)
class AnovaResult:
    """ANOVA / Kruskal–Wallis / Tukey HSD over the configs of one engine for one step."""

    engine: str
    workload: str
    test: str
    step: str
    metric: str
    configs: tuple[str, ...]
    n: tuple[int, ...]
    f_stat: float | None
    p_anova: float | None
    eta_squared: float | None
    h_stat: float | None
    p_kruskal: float | None
    skewed: bool
    skew_reason: str
    tukey: tuple[TukeyPair, ...]
    # "all configs", or "encrypted configs": the same test without the plain config, i.e. across key lengths or
    # mechanisms only (as the MySQL/MariaDB study tested AES-128/192/256 before comparing with no encryption)
    scope: str = ALL_CONFIGS

    @property
    def primary_test(self) -> str:
        """The test to read: Kruskal–Wallis when the data is skewed, else ANOVA."""
        return "Kruskal–Wallis" if self.skewed else "ANOVA"

    @property
    def primary_p(self) -> float | None:
        """p-value of :attr:`primary_test`."""
        return self.p_kruskal if self.skewed else self.p_anova


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(float(x)) else None


def eta_squared(groups: Sequence[np.ndarray]) -> float | None:
    """Effect size: between-group sum of squares over total sum of squares."""
    allv = np.concatenate([np.asarray(g, dtype=float) for g in groups])
    ss_total = float(((allv - allv.mean()) ** 2).sum())
    if ss_total == 0:
        return None
    ss_between = sum(g.size * (float(np.mean(g)) - allv.mean()) ** 2 for g in groups)
    return float(ss_between / ss_total)  # a numpy scalar would reach the CSV as 'np.float64(...)'


def skewness_check(groups: Sequence[np.ndarray]) -> tuple[bool, str]:
    """Skewed when any group (n ≥ 3) has |skew| > 1 or a Shapiro–Wilk p < 0.05."""
    for g in groups:
        g = np.asarray(g, dtype=float)
        if g.size < 3 or np.ptp(g) == 0:
            continue
        skew = float(_stats().skew(g))
        if abs(skew) > SKEW_LIMIT:
            return True, f"|skew| = {abs(skew):.2f} > {SKEW_LIMIT:g}"
        p = float(_stats().shapiro(g).pvalue)
        if p < SHAPIRO_ALPHA:
            return True, f"Shapiro–Wilk p = {p:.3f} < {SHAPIRO_ALPHA:g}"
    return False, ""


def _tukey(configs: Sequence[str], groups: Sequence[np.ndarray]) -> tuple[TukeyPair, ...]:
    res = tukey_hsd(groups)
    pairs = []
    for i in range(len(groups)):
        for j in range(i + 1, len(groups)):
            # res.statistic[i, j] = mean(i) − mean(j); report b − a with a = i, b = j
            pairs.append(TukeyPair(configs[i], configs[j], -float(res.statistic[i, j]),
                                   -float(res.high[i, j]), -float(res.low[i, j]),
                                   float(res.pvalue[i, j])))
    return tuple(pairs)


def anova_for(step_key: tuple[str, str, str, str, str], configs: Sequence[str],
              groups: Sequence[np.ndarray], scope: str = ALL_CONFIGS) -> AnovaResult:
    """Run the tests for one step over the given config groups (each n ≥ 2)."""
    engine, workload, test, step, metric = step_key
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = _stats().f_oneway(*groups)
        try:
            kw = _stats().kruskal(*groups)
            h, p_kw = _finite(kw.statistic), _finite(kw.pvalue)
        except ValueError:  # all values identical
            h, p_kw = None, None
        f_stat, p_f = _finite(f.statistic), _finite(f.pvalue)
        tukey = _tukey(configs, groups) if p_f is not None else ()
    skewed, reason = skewness_check(groups)
    return AnovaResult(engine, workload, test, step, metric, tuple(configs),
                       tuple(int(g.size) for g in groups), f_stat, p_f, eta_squared(groups),
                       h, p_kw, skewed, reason, tukey, scope)


def anova_by_step(m: Measurements, *, min_configs: int = 3) -> list[AnovaResult]:
    """One result per (engine, workload, test, step, metric) with ≥ ``min_configs`` configs of n ≥ 2; where a
    plain config is among them and ≥ ``min_configs`` encrypted ones remain, a second result over the encrypted
    configs only (scope :data:`ENCRYPTED_ONLY`): do the key lengths (or mechanisms) differ from each other?"""
    by_step: dict[tuple[str, str, str, str, str], list[tuple[str, np.ndarray]]] = {}
    order = {c: i for i, c in enumerate(m.config_order)}
    for key, sample in m.series.items():
        if sample.n >= 2:
            by_step.setdefault(key.step_key, []).append((key.config, sample.values))
    out = []
    for step_key, items in by_step.items():
        if len(items) < min_configs:
            continue
        items.sort(key=lambda item: order.get(item[0], len(order)))
        out.append(anova_for(step_key, [c for c, _ in items], [v for _, v in items]))
        encrypted = [(c, v) for c, v in items if m.encryption.get(c) not in (None, "", "none")]
        if len(encrypted) >= min_configs and len(encrypted) < len(items):
            out.append(anova_for(step_key, [c for c, _ in encrypted], [v for _, v in encrypted], ENCRYPTED_ONLY))
    return out


def anova_key(result: AnovaResult) -> SeriesKey:
    """The series key of a result, with an empty config."""
    return SeriesKey(result.engine, "", result.workload, result.test, result.step, result.metric)
