"""Load ``measurements.csv`` into typed rows.

Only rows with status ``ok`` outside the warm-up block (block 0) are kept for statistics.
Warm-up rows are counted and discarded; ``failed`` and ``timeout`` rows are counted per
series so that reports can say "n failed"; ``fault`` rows (a trial flagged by ``--fault``, docs/faults.md)
are counted per series and left out of every interval and test.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import numpy as np

PLAIN_SPECS = frozenset({"none", "", "plain", "off"})


def is_plain(encryption: str) -> bool:
    """True when an encryption spec means "no encryption" (the plain twin)."""
    return encryption.strip().lower() in PLAIN_SPECS


class SeriesKey(NamedTuple):
    """Identifies one measured series: the values of one step of one config."""

    engine: str
    config: str
    workload: str
    test: str
    step: str
    metric: str

    def with_config(self, config: str) -> SeriesKey:
        """The same series for another config (e.g. the plain twin)."""
        return self._replace(config=config)

    @property
    def step_key(self) -> tuple[str, str, str, str, str]:
        """The key without the config: (engine, workload, test, step, metric)."""
        return (self.engine, self.workload, self.test, self.step, self.metric)


@dataclass(frozen=True, slots=True)
class Row:
    """One kept measurement (status ``ok``, block > 0): the series it belongs to and its value."""

    key: SeriesKey
    encryption: str
    stream: int | None
    block: int
    trial: int
    value: float
    unit: str
    round: int = 0  # the interleaved schedule's round inside the block; 0: the block is the pairing unit


ROUNDS_PER_BLOCK = 1_000_000  # unit ids: block * this + round, in time order and unique


def per_block(units: np.ndarray, plain: np.ndarray, config: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                   np.ndarray]:
    """Values paired by round (``units`` as :attr:`Sample.units`, both arms in the same units, time order) as one
    pair per block: (blocks, plain, config), each arm the geometric mean of its values over the block's rounds.

    The block, not the round, is the unit a round-paired interval must count: every block restarts the servers
    and forks new clients, and that state moves all the rounds of a block together (an A/A test measured a
    between-block sd of 4.9% beside a round's 18%: docs/precision-statistics.md, "The block effect")."""
    blocks = np.asarray(units, dtype=np.int64) // ROUNDS_PER_BLOCK
    ids = np.unique(blocks)
    lp, lc = np.log(np.asarray(plain, dtype=float)), np.log(np.asarray(config, dtype=float))
    return (ids, np.array([math.exp(lp[blocks == b].mean()) for b in ids]),
            np.array([math.exp(lc[blocks == b].mean()) for b in ids]))


@dataclass(frozen=True)
class Sample:
    """The values of one series with the block (and round, for the interleaved OLTP schedule) each value was
    measured in. The pairing unit of a value is its block and round: twins are paired per round where rounds
    exist, else per block."""

    values: np.ndarray
    blocks: np.ndarray
    trials: np.ndarray | None = None
    rounds: np.ndarray | None = None

    @property
    def units(self) -> np.ndarray:
        """One id per value for its pairing unit (block and round), increasing in time order."""
        rounds = self.rounds if self.rounds is not None else np.zeros_like(self.blocks)
        return self.blocks.astype(np.int64) * ROUNDS_PER_BLOCK + rounds.astype(np.int64)

    @property
    def one_off(self) -> bool:
        """True for one-off steps such as the load (every value has trial 0)."""
        return self.trials is not None and self.trials.size > 0 and not self.trials.any()

    @property
    def n(self) -> int:
        """Number of values."""
        return int(self.values.size)


@dataclass
class Measurements:
    """Kept rows plus the bookkeeping of what was discarded or failed."""

    rows: list[Row]
    failed: Counter[SeriesKey] = field(default_factory=Counter)
    timeouts: Counter[SeriesKey] = field(default_factory=Counter)
    faulted: Counter[SeriesKey] = field(default_factory=Counter)
    warmup_rows: int = 0
    skipped_rows: int = 0
    run_ids: tuple[str, ...] = ()
    encryption: dict[str, str] = field(default_factory=dict)
    units: dict[SeriesKey, str] = field(default_factory=dict)
    config_order: list[str] = field(default_factory=list)

    @cached_property
    def series(self) -> dict[SeriesKey, Sample]:
        """Values and blocks per series, in file order; one value per block, round and trial. Values measured in
        the same block, round and trial (the concurrent streams of a TPC-H throughput test) are one observation,
        their mean: streams that ran side by side are not independent replicates, and counting each as one would
        narrow intervals and p-values for nothing (pseudo-replication). The rounds of an interleaved schedule are
        measured one after the other, each config in turn: each is one observation."""
        cols: dict[SeriesKey, dict[tuple[int, int, int], list[float]]] = {}
        for row in self.rows:
            cols.setdefault(row.key, {}).setdefault((row.block, row.round, row.trial), []).append(row.value)
        return {k: Sample(np.asarray([float(np.mean(v)) for v in units.values()], dtype=float),
                          np.asarray([b for b, _, _ in units], dtype=int),
                          np.asarray([t for _, _, t in units], dtype=int),
                          np.asarray([r for _, r, _ in units], dtype=int))
                for k, units in cols.items()}

    def all_keys(self) -> list[SeriesKey]:
        """Every series seen, including those with only failed rows."""
        keys = dict.fromkeys(self.series)
        keys.update(dict.fromkeys(self.failed))
        keys.update(dict.fromkeys(self.timeouts))
        return list(keys)

    def sample(self, key: SeriesKey) -> Sample | None:
        """The sample of a series, or None when it has no ok values."""
        return self.series.get(key)


def _int(text: str | None, default: int | None = 0) -> int | None:
    try:
        return int(float(text)) if text not in (None, "") else default
    except ValueError:
        return default


def _key_of(rec: Mapping[str, str]) -> SeriesKey:
    get = lambda c: (rec.get(c) or "").strip()  # noqa: E731
    return SeriesKey(get("engine"), get("config"), get("workload"), get("test"), get("step"),
                     get("metric"))


def parse_rows(records: Iterable[Mapping[str, str]]) -> Measurements:
    """Turn CSV records (dicts of text) into :class:`Measurements`."""
    m = Measurements(rows=[])
    run_ids: dict[str, None] = {}
    for rec in records:
        status = (rec.get("status") or "").strip().lower()
        block = _int(rec.get("block"), default=None)
        key = _key_of(rec)
        if rec.get("run_id"):
            run_ids[rec["run_id"]] = None
        if key.config and key.config not in m.encryption:
            m.encryption[key.config] = (rec.get("encryption") or "").strip()
            m.config_order.append(key.config)
        if status == "warmup" or block == 0:
            m.warmup_rows += 1
        elif status == "failed":
            m.failed[key] += 1
        elif status == "timeout":
            m.timeouts[key] += 1
        elif status == "fault":
            m.faulted[key] += 1
        elif status == "ok" and block is not None:
            _keep(m, rec, key, block)
        else:
            m.skipped_rows += 1
    m.run_ids = tuple(run_ids)
    return m


def _keep(m: Measurements, rec: Mapping[str, str], key: SeriesKey, block: int) -> None:
    try:
        value = float(rec.get("value") or "nan")
    except ValueError:
        value = float("nan")
    if not np.isfinite(value):
        m.skipped_rows += 1
        return
    m.rows.append(Row(
        key=key, encryption=m.encryption.get(key.config, ""), stream=_int(rec.get("stream"), default=None),
        block=block, trial=_int(rec.get("trial")) or 0, value=value, unit=(rec.get("unit") or "").strip(),
        round=_int(rec.get("round")) or 0,
    ))
    m.units.setdefault(key, (rec.get("unit") or "").strip())


def load_measurements(path: Path) -> Measurements:
    """Read a ``measurements.csv`` file (or a run directory containing one)."""
    path = Path(path)
    if path.is_dir():
        path = path / "measurements.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        return parse_rows(csv.DictReader(fh))
