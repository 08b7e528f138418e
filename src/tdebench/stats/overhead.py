"""Overhead of each config against its plain twin, with its CI and p-value.

The estimate and interval depend on n and on the values (see :mod:`tdebench.stats.interval`);
every row records which method gave its interval (``ci_method``) and its p-value (``p_method``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

import numpy as np

from tdebench.api.keys import file_twin
from tdebench.api.regime import ratio_of, split_label
from tdebench.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from tdebench.stats.interval import DEFAULT_METHOD, IntervalMethod, overhead_interval, rounds_interval
from tdebench.stats.load import Measurements, Sample, SeriesKey, is_plain, per_block
from tdebench.stats import tdist


@dataclass(frozen=True)
class Comparison:
    """Result of comparing a sample against a baseline sample (percentages, not fractions)."""

    n_base: int
    n_other: int
    median_base: float
    median_other: float
    pct: float
    ci_low_pct: float | None
    ci_high_pct: float | None
    p_value: float | None
    paired: bool
    ci_method: str = ""
    p_method: str = ""
    #: what one paired observation is: "block", or "round" (only when all rounds are of one block); "" unpaired
    pairing_unit: str = ""
    #: the mean paired difference config − plain in the metric's unit, with its 95% t interval (paired only)
    difference: float | None = None
    difference_low: float | None = None
    difference_high: float | None = None


class SeriesInterval:
    """What a row of one series with a CI in percent answers: the series it names and whether its CI includes 0.
    A subclass (a dataclass) has the fields engine, config, workload, test, step and metric (str), and ci_low_pct
    and ci_high_pct (float or None)."""

    __slots__ = ()
    ci_low_pct: float | None
    ci_high_pct: float | None

    @property
    def key(self) -> SeriesKey:
        """The series (of the encrypted config, for an overhead)."""
        return SeriesKey(self.engine, self.config, self.workload, self.test, self.step, self.metric)

    @property
    def ci_spans_zero(self) -> bool:
        """True when the CI includes 0 (or there is no CI)."""
        if self.ci_low_pct is None or self.ci_high_pct is None:
            return True
        return self.ci_low_pct <= 0.0 <= self.ci_high_pct


@dataclass(frozen=True)
class Overhead(SeriesInterval):
    """One row of ``overhead.csv``; the first eleven fields are the stable public columns.

    ``overhead_pct`` is the estimate of ``ci_method``: the ratio of geometric means − 1 for the
    t methods, the ratio of medians − 1 for the bootstrap (and when there is no interval).
    """

    engine: str
    config: str
    workload: str
    step: str
    n: int
    median_plain: float
    median_config: float
    overhead_pct: float
    ci_low_pct: float | None
    ci_high_pct: float | None
    p_value: float | None
    test: str = ""
    metric: str = ""
    unit: str = ""
    encryption: str = ""
    plain_config: str = ""
    n_plain: int = 0
    n_config: int = 0
    paired: bool = False
    ci_method: str = ""
    p_method: str = ""
    #: what one paired observation is: "block", or "round" (the interleaved OLTP schedule); "" when unpaired
    pairing_unit: str = ""
    #: what the config adds to the plain twin's value, in the metric's unit (e.g. seconds per execution): the mean
    #: of the paired differences with its 95% t interval; empty when unpaired or below 2 pairs
    difference: float | None = None
    difference_low: float | None = None
    difference_high: float | None = None

    def as_row(self) -> dict[str, object]:
        """Flat dict with the columns of ``overhead.csv``."""
        return asdict(self)


OVERHEAD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Overhead))


def pair_by_block(base: Sample, other: Sample) -> tuple[np.ndarray, np.ndarray] | None:
    """Values of both sides ordered by pairing unit (block, and round where the schedule has rounds) when both
    have one value in exactly the same units."""
    if base.n != other.n or base.n < 2:
        return None
    mine, theirs = base.units, other.units
    if len(set(mine.tolist())) != base.n or set(mine.tolist()) != set(theirs.tolist()):
        return None
    return base.values[np.argsort(mine)], other.values[np.argsort(theirs)]


def compare_samples(base: Sample, other: Sample, *, seed: int = DEFAULT_SEED,
                    n_resamples: int = DEFAULT_RESAMPLES, method: IntervalMethod = DEFAULT_METHOD,
                    allow_pairing: bool = True) -> Comparison:
    """``other`` vs ``base`` in percent with CI and p (paired by block when the blocks match)."""
    pairs = pair_by_block(base, other) if allow_pairing else None
    b, o = pairs if pairs is not None else (base.values, other.values)
    unit = ("round" if _pairing_unit(other) == "round" else "block") if pairs is not None else ""
    n_base, n_other = base.n, other.n
    iv = None
    if unit == "round" and (b > 0).all() and (o > 0).all():
        blocks, pb, po = per_block(np.sort(other.units), b, o)
        if blocks.size >= 2:  # the block is the independent unit (load.per_block); rounds only within one block
            b, o, unit, n_base, n_other = pb, po, "block", blocks.size, blocks.size
        else:
            iv = rounds_interval(b, o)
    iv = iv or overhead_interval(b, o, paired=pairs is not None, method=method, seed=seed,
                                 n_resamples=n_resamples)
    diff = paired_difference(b, o) if pairs is not None else None
    return Comparison(
        n_base=n_base, n_other=n_other, median_base=float(np.median(base.values)),
        median_other=float(np.median(other.values)), pct=iv.estimate * 100.0,
        ci_low_pct=iv.ci[0] * 100.0 if iv.ci else None,
        ci_high_pct=iv.ci[1] * 100.0 if iv.ci else None,
        p_value=iv.p_value, paired=pairs is not None, ci_method=iv.ci_method, p_method=iv.p_method,
        pairing_unit=unit, **(diff or {}),
    )


def paired_difference(base: np.ndarray, other: np.ndarray,
                      confidence: float = 0.95) -> dict[str, float | None] | None:
    """The mean of ``other − base`` over paired units with its t interval (None below 2 pairs).

    Where a mechanism adds a nearly fixed time to each operation, its ratio moves with the plain twin's own time (a
    commit's flush, the host's disk) while the time it adds moves less."""
    b, o = np.asarray(base, dtype=float), np.asarray(other, dtype=float)
    if b.size < 2 or not np.isfinite(o - b).all():
        return None
    t = tdist.paired(o, b, confidence)
    low, high = (t.low, t.high) if math.isfinite(t.low) else (t.estimate, t.estimate)  # no spread: the point itself
    return {"difference": t.estimate, "difference_low": low, "difference_high": high}


def _pairing_unit(sample: Sample) -> str:
    return "round" if sample.rounds is not None and sample.rounds.any() else "block"


def config_engines(m: Measurements) -> dict[str, str]:
    """Engine of each config label, in the order configs first appear."""
    out: dict[str, str] = {}
    for key in m.all_keys():
        out.setdefault(key.config, key.engine)
    return {c: out[c] for c in m.config_order if c in out}


def default_baselines(m: Measurements) -> dict[str, str]:
    """Map every other config of an engine to its first plain config (encryption ``none``) at the same memory
    ratio when the run swept one (labels ``...@mem0.25``, :mod:`tdebench.api.regime`): encrypted configs, and the
    second plain twin of an A/A test (``--encryption none,none``), compared like an encrypted one. A config whose
    keys live on a key server is compared with its file-key twin instead, when the run has one
    (:func:`tdebench.api.keys.file_twin`): what the key server costs, not what the encryption does."""
    engines = config_engines(m)
    # the plan's order: a label at a memory ratio ranks where its base label does (the twins' loads come first,
    # in the plan's order), not where its first block's random order put it
    rank = {c: i for i, c in enumerate(m.config_order)}
    ordered = sorted(engines, key=lambda c: rank.get(split_label(c)[0], rank[c]))
    plain: dict[tuple[str, float | None], str] = {}
    for config in ordered:
        if is_plain(m.encryption.get(config, "")):
            plain.setdefault((engines[config], ratio_of(config)), config)
    out = {c: plain[(e, ratio_of(c))] for c, e in engines.items()
           if (e, ratio_of(c)) in plain and c != plain[(e, ratio_of(c))]}
    for config, engine in engines.items():
        twin = file_twin(config, engines)
        if twin is not None and engines[twin] == engine:
            out[config] = twin
    return out


def compute_overheads(m: Measurements, *, baselines: Mapping[str, str] | None = None,
                      seed: int = DEFAULT_SEED, n_resamples: int = DEFAULT_RESAMPLES,
                      method: IntervalMethod = DEFAULT_METHOD) -> list[Overhead]:
    """Overhead rows for every series of every encrypted config that has a plain twin with data."""
    baselines = default_baselines(m) if baselines is None else baselines
    out: list[Overhead] = []
    for key, sample in m.series.items():
        plain = baselines.get(key.config)
        twin = m.sample(key.with_config(plain)) if plain else None
        if twin is None or plain is None:
            continue
        c = compare_samples(twin, sample, seed=seed, n_resamples=n_resamples, method=method)
        out.append(Overhead(
            engine=key.engine, config=key.config, workload=key.workload, step=key.step,
            n=min(c.n_base, c.n_other), median_plain=c.median_base, median_config=c.median_other,
            overhead_pct=c.pct, ci_low_pct=c.ci_low_pct, ci_high_pct=c.ci_high_pct,
            p_value=c.p_value, test=key.test, metric=key.metric, unit=m.units.get(key, ""),
            encryption=m.encryption.get(key.config, ""), plain_config=plain,
            n_plain=c.n_base, n_config=c.n_other, paired=c.paired, ci_method=c.ci_method,
            p_method=c.p_method, pairing_unit=c.pairing_unit, difference=c.difference,
            difference_low=c.difference_low, difference_high=c.difference_high,
        ))
    return out
