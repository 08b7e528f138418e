"""The headline overhead of a ``--precision`` run: the interval the stopping rule checked, in overhead rows.

:func:`apply_sequential` replaces the ``overhead.csv`` rows of the series the rule watched (e.g. ``power/total/elapsed``)
with the estimate and interval of :class:`tdebench.stats.sequential.StoppingRule` on the same paired blocks, so
the report shows the very CI that met (or missed) the target. ``ci_method`` is ``seq-<rule>`` (e.g.
``seq-ar1-upper``); the p-value is the paired t-test on the log ratios with the same variance factor, so that
p < 0.05 exactly when that interval excludes 0 (``p_method`` ``seq-<rule>-t``). Other series keep their method.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import replace

import numpy as np

from tdebench.stats.load import ROUNDS_PER_BLOCK, Measurements, SeriesKey, per_block
from tdebench.stats.overhead import Overhead
from tdebench.stats.sequential import StoppingRule, lag1, variance_factor
from tdebench.stats.tdist import t_sf


def paired_blocks(m: Measurements, key: SeriesKey, base: str) -> tuple[np.ndarray, np.ndarray]:
    """(plain, config) values of series ``key`` per block both it and config ``base`` have, in time order: the
    values themselves, or where rounds pair them (the interleaved OLTP schedule), each block's geometric mean over
    the rounds both have (:func:`tdebench.stats.load.per_block`: the block is the independent unit)."""
    mine, theirs = m.sample(key), m.sample(key.with_config(base))
    if mine is None or theirs is None:
        return np.array([]), np.array([])
    a = {int(b): float(v) for b, v in zip(theirs.units, theirs.values)}
    c = {int(b): float(v) for b, v in zip(mine.units, mine.values)}
    units = sorted(set(a) & set(c))
    plain, config = np.array([a[u] for u in units]), np.array([c[u] for u in units])
    if any(u % ROUNDS_PER_BLOCK for u in units) and (plain > 0).all() and (config > 0).all():
        _, plain, config = per_block(np.array(units, dtype=np.int64), plain, config)
    return plain, config


def _p_value(rule: StoppingRule, d: np.ndarray) -> float | None:
    n = d.size
    if n < 2:
        return None
    sd = float(d.std(ddof=1))
    if sd == 0:
        return 0.0 if float(d.mean()) != 0 else 1.0
    f = float(variance_factor(rule.rule, lag1(d), n))
    t = float(d.mean()) / (sd * math.sqrt(f) / math.sqrt(n))
    return float(2 * t_sf(abs(t), n - 1))


def sequential_row(o: Overhead, m: Measurements, rule: StoppingRule) -> Overhead:
    """``o`` with the stopping rule's estimate, interval and matching p-value (unchanged when it cannot apply)."""
    plain, config = paired_blocks(m, o.key, o.plain_config)
    if plain.size < 2 or (plain <= 0).any() or (config <= 0).any():
        return o
    d = rule.check_paired(plain, config)
    p = _p_value(rule, np.log(config) - np.log(plain))
    return replace(o, n=d.n, overhead_pct=d.estimate_pct if d.estimate_pct is not None else o.overhead_pct,
                   ci_low_pct=d.ci_low_pct, ci_high_pct=d.ci_high_pct, p_value=p, paired=True,
                   ci_method=f"seq-{rule.rule}", p_method=f"seq-{rule.rule}-t")


def apply_sequential(overheads: list[Overhead], m: Measurements, rule: StoppingRule,
                     series: Collection[tuple[str, str, str]]) -> list[Overhead]:
    """Rows of every ``series`` (test, step, metric) the rule watched recomputed with it; the others as they are."""
    watched = set(series)
    return [sequential_row(o, m, rule) if (o.test, o.step, o.metric) in watched else o for o in overheads]
