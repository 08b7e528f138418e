"""The cipher floor beside the measured overhead, per encrypted config and step.

floor = bytes decrypted during the step ÷ the cipher's decrypt speed + bytes encrypted ÷ its encrypt speed (one
core, with SQLCipher's HMAC-SHA512 folded in), median over trials. The bytes are what crossed the encryption
boundary as the engine itself counts it (``counters`` rows: pages decrypted/encrypted × page size, see
:mod:`tdebench.report.counters_view` and docs/engines/*.md), or the engine's estimate (marked); where an engine
counts neither, the floor falls back, labelled, to the bytes the server process tree read from and wrote to
storage (``resources`` rows: /proc/<pid>/io ``read_bytes``/``write_bytes``), which misses every page served by the
OS page cache. The measured overhead (seconds) = median(config) − median(plain twin at the same memory ratio).

The cipher table is the run's ``ciphers.json`` when there is one; otherwise it is measured once at report time
(0.05 s per cipher) and kept in ``report/ciphers.json`` so later rebuilds show the same figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tdebench.encryption import parse_spec
from tdebench.errors import TdebenchError
from tdebench.measure import cipherspeed as cm
from tdebench.report.counters_view import CounterIndex
from tdebench.report.model import RunSummary
from tdebench.stats.load import SeriesKey, is_plain
from tdebench.stats.metrics import query_number
from tdebench.stats.overhead import Overhead

QUICK_SECONDS = 0.05
COUNTED, ESTIMATED, FALLBACK = "counted", "estimated", "disk IO (fallback)"
REPORT_TIME = (f"measured when this report was first built ({QUICK_SECONDS:g} s per cipher, kept in "
               "report/ciphers.json); the run may have used another machine")


@dataclass
class CipherTable:
    """Speeds and where they come from."""

    speeds: list[cm.CipherSpeed]
    source: str


@dataclass
class FloorRow:
    """One encrypted config and step. ``read_bytes``/``write_bytes`` are the bytes the floor divides: decrypted
    and encrypted as counted (``basis``), or read and written by the server in the disk IO fallback."""

    config: str
    encryption: str
    step: str
    read_bytes: float
    write_bytes: float
    cipher: str
    floor_s: float
    plain_s: float | None = None
    config_s: float | None = None
    overhead: Overhead | None = None  # the step's elapsed time against the plain twin
    basis: str = FALLBACK
    hit_ratio: float | None = None

    @property
    def overhead_s(self) -> float | None:
        return None if self.plain_s is None or self.config_s is None else self.config_s - self.plain_s

    @property
    def floor_share(self) -> float | None:
        """Floor as a fraction of the measured overhead (None unless the overhead's CI lies above 0)."""
        o, interval = self.overhead_s, self.overhead
        above_zero = interval is not None and not interval.ci_spans_zero and (interval.ci_low_pct or 0.0) > 0
        return self.floor_s / o if o is not None and o > 0 and above_zero else None


@dataclass
class EngineFloor:
    engine: str
    rows: list[FloorRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _cipher_names(specs: list[str]) -> list[str]:
    names = set()
    for text in specs:
        mapping = cm.cipher_for_spec(parse_spec(text))
        if mapping is not None:
            names.add(mapping.name)
            if mapping.mac:
                names.add(mapping.mac)
    return sorted(names)


def cipher_table(run_dir: Path, specs: list[str]) -> CipherTable | None:
    """The run's table, the one kept from an earlier report build, or a quick measurement now."""
    for path, source in ((run_dir / "ciphers.json", "the run's ciphers.json"),
                         (run_dir / "report" / "ciphers.json", REPORT_TIME)):
        if path.is_file():
            try:
                return CipherTable(cm.load_table(path), source)
            except TdebenchError:
                continue
    names = _cipher_names(specs)
    if not names:
        return None
    speeds = cm.measure_ciphers(seconds_each=QUICK_SECONDS, names=names)
    cm.save_table(run_dir / "report" / "ciphers.json", speeds, QUICK_SECONDS)
    return CipherTable(speeds, REPORT_TIME)


def _median(rs: RunSummary, key: SeriesKey) -> float | None:
    sample = rs.analysis.measurements.sample(key)
    return float(np.median(sample.values)) if sample is not None and sample.n else None


def _elapsed_key(rs: RunSummary, config: str, step: str) -> SeriesKey | None:
    """The workload's elapsed series for a marked step (the headline's test's when several tests have it)."""
    keys = [k for k in rs.analysis.measurements.series if k.config == config and k.step == step
            and k.metric == "elapsed" and k.test != "resources"]
    main = {h.test for h in rs.presentation.headlines}
    keys.sort(key=lambda k: k.test not in main)
    return keys[0] if keys else None


def _row(rs: RunSummary, table: CipherTable, counters: CounterIndex, config: str, step: str) -> FloorRow | None:
    enc = rs.analysis.measurements.encryption.get(config, "")
    mapping = cm.cipher_for_spec(parse_spec(enc))
    if mapping is None:
        return None
    crossing = counters.crossing(config, step)
    if crossing.known:
        read, write = crossing.decrypted or 0.0, crossing.encrypted or 0.0
        basis = ESTIMATED if crossing.estimate else COUNTED
    else:
        keys = [k for k in rs.analysis.measurements.series if k.config == config and k.test == "resources"
                and k.step == step and k.metric == "server_read_bytes"]
        if not keys:
            return None
        resources = keys[0]
        read = _median(rs, resources)
        write = _median(rs, resources._replace(metric="server_write_bytes"))
        if read is None or write is None:
            return None
        basis = FALLBACK
    floor = cm.floor_for_spec(enc, table.speeds, int(read), int(write), include_mac=True)
    if floor is None:
        return None
    row = FloorRow(config, enc, step, read, write, mapping.name + (f" + {mapping.mac}" if mapping.mac else ""),
                   floor, basis=basis, hit_ratio=counters.hit_ratio(config, step))
    elapsed = _elapsed_key(rs, config, step)
    plain = rs.analysis.baselines.get(config)
    if elapsed is not None and plain is not None:
        row.config_s, row.plain_s = _median(rs, elapsed), _median(rs, elapsed._replace(config=plain))
        row.overhead = rs.analysis.overhead(elapsed)
    return row


def _notes(specs: set[str]) -> list[str]:
    notes = []
    for text in sorted(specs):
        mapping = cm.cipher_for_spec(parse_spec(text))
        if mapping is not None and mapping.mac:
            notes.append(f"{text}: the floor includes the {mapping.mac} that the engine computes per page")
        elif mapping is not None and mapping.note:
            notes.append(f"{text}: {mapping.note}")
        if text.startswith("column:"):
            notes.append(f"{text}: pgcrypto encrypts values in SQL functions, not pages on their way to disk, so "
                         "the IO-based floor understates its cipher work (see the AES vs 3DES section)")
    return notes


def _steps(rs: RunSummary, counters: CounterIndex, config: str) -> list[str]:
    """Steps with counters or resources of ``config`` (not the whole trial), then ``total`` of the queries."""
    steps = counters.steps(config)
    for k in rs.analysis.measurements.series:
        if k.config == config and k.test == "resources" and k.metric == "server_read_bytes" and k.step != "trial" \
                and k.step not in steps:
            steps.append(k.step)
    if any(query_number(s) is not None for s in steps) and "total" not in steps:
        steps.append("total")
    return sorted(steps, key=lambda s: _STEP_ORDER.get(s, (1, query_number(s) or 0) if query_number(s) else (3, 0)))


# the power test's order: RF1, the queries by number, RF2; then other steps as found, the queries' total last
_STEP_ORDER = {"rf1": (0, 0), "rf2": (2, 0), "total": (4, 0)}


def engine_floors(rs: RunSummary) -> tuple[list[EngineFloor], CipherTable | None]:
    """Floor rows per engine; empty when no encrypted config has ``counters`` or ``resources`` measurements."""
    m = rs.analysis.measurements
    counters = CounterIndex(m)
    configs = list(dict.fromkeys(k.config for k in m.series if k.test in ("resources", "counters")
                                 and not is_plain(m.encryption.get(k.config, ""))))
    if not configs:
        return [], None
    specs = sorted({m.encryption.get(c, "") for c in configs})
    table = cipher_table(rs.run_dir, specs)
    if table is None:
        return [], None
    out = []
    for es in rs.engines:
        ef = EngineFloor(es.engine)
        for config in (c for c in es.configs if c in configs):
            for step in _steps(rs, counters, config):
                row = _row(rs, table, counters, config, step)
                if row is not None:
                    ef.rows.append(row)
        if ef.rows:
            ef.notes = _notes({r.encryption for r in ef.rows})
            if any(r.basis == FALLBACK for r in ef.rows):
                ef.notes.append("Rows counted from disk IO (fallback): the engine counted no decrypted bytes for "
                                "them, so pages served by the OS page cache are missing from their floor.")
            out.append(ef)
    return out, table
