"""The cipher floor beside the measured overhead, per encrypted config and step.

floor = bytes the server read during the step ÷ the cipher's decrypt speed + bytes it wrote ÷ its encrypt
speed (``resources`` measurements: /proc/<pid>/io ``read_bytes``/``write_bytes`` of the server process tree,
median over trials), with the speeds of the cipher the spec names (one core). That is the least CPU time the
encryption itself adds; the measured overhead (seconds) = median(config) − median(plain twin) of the step.

The cipher table is the run's ``ciphers.json`` when there is one; otherwise it is measured once at report time
(0.05 s per cipher) and kept in ``report/ciphers.json`` so later rebuilds show the same figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tdebench.encryption import parse_spec
from tdebench.errors import TdebenchError
from tdebench.measure import ciphers as cm
from tdebench.report.model import RunSummary
from tdebench.stats.load import SeriesKey, is_plain

QUICK_SECONDS = 0.05
REPORT_TIME = (f"measured when this report was first built ({QUICK_SECONDS:g} s per cipher, kept in "
               "report/ciphers.json); the run may have used another machine")


@dataclass
class CipherTable:
    """Speeds and where they come from."""

    speeds: list[cm.CipherSpeed]
    source: str


@dataclass
class FloorRow:
    """One encrypted config and step."""

    config: str
    encryption: str
    step: str
    read_bytes: float
    write_bytes: float
    cipher: str
    floor_s: float
    plain_s: float | None = None
    config_s: float | None = None
    overhead_pct: float | None = None
    ci_low_pct: float | None = None
    ci_high_pct: float | None = None

    @property
    def overhead_s(self) -> float | None:
        return None if self.plain_s is None or self.config_s is None else self.config_s - self.plain_s

    @property
    def floor_share(self) -> float | None:
        """Floor as a fraction of the measured overhead (None unless the overhead's CI lies above 0)."""
        o = self.overhead_s
        resolved = self.ci_low_pct is not None and self.ci_high_pct is not None and self.ci_low_pct > 0
        return self.floor_s / o if o is not None and o > 0 and resolved else None


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
    """The workload's elapsed series for a marked step (the power test's when several tests have it)."""
    keys = [k for k in rs.analysis.measurements.series if k.config == config and k.step == step
            and k.metric == "elapsed" and k.test != "resources"]
    keys.sort(key=lambda k: k.test != "power")
    return keys[0] if keys else None


def _row(rs: RunSummary, table: CipherTable, key: SeriesKey, plain: str | None) -> FloorRow | None:
    enc = rs.analysis.measurements.encryption.get(key.config, "")
    read = _median(rs, key._replace(metric="server_read_bytes"))
    write = _median(rs, key._replace(metric="server_write_bytes"))
    mapping = cm.cipher_for_spec(parse_spec(enc))
    if read is None or write is None or mapping is None:
        return None
    floor = cm.floor_for_spec(enc, table.speeds, int(read), int(write), include_mac=True)
    if floor is None:
        return None
    row = FloorRow(key.config, enc, key.step, read, write, mapping.name + (f" + {mapping.mac}" if mapping.mac else ""),
                   floor)
    elapsed = _elapsed_key(rs, key.config, key.step)
    if elapsed is not None and plain is not None:
        row.config_s, row.plain_s = _median(rs, elapsed), _median(rs, elapsed._replace(config=plain))
        o = rs.analysis.overhead(elapsed)
        if o is not None:
            row.overhead_pct, row.ci_low_pct, row.ci_high_pct = o.overhead_pct, o.ci_low_pct, o.ci_high_pct
    return row


def _notes(specs: set[str]) -> list[str]:
    notes = []
    for text in sorted(specs):
        mapping = cm.cipher_for_spec(parse_spec(text))
        if mapping is not None and mapping.note:
            notes.append(f"{text}: {mapping.note}")
        if text.startswith("column:"):
            notes.append(f"{text}: pgcrypto encrypts values in SQL functions, not pages on their way to disk, so "
                         "the IO-based floor understates its cipher work (see the AES vs 3DES section)")
    return notes


def engine_floors(rs: RunSummary) -> tuple[list[EngineFloor], CipherTable | None]:
    """Floor rows per engine; empty when no encrypted config has ``resources`` measurements."""
    m = rs.analysis.measurements
    keys = [k for k in m.series if k.test == "resources" and k.metric == "server_read_bytes"
            and not is_plain(m.encryption.get(k.config, "")) and k.step != "trial"]
    if not keys:
        return [], None
    specs = sorted({m.encryption.get(k.config, "") for k in keys})
    table = cipher_table(rs.run_dir, specs)
    if table is None:
        return [], None
    out = []
    for es in rs.engines:
        ef = EngineFloor(es.engine)
        for key in (k for k in keys if k.engine == es.engine):
            row = _row(rs, table, key, es.plain)
            if row is not None:
                ef.rows.append(row)
        if ef.rows:
            ef.notes = _notes({r.encryption for r in ef.rows})
            out.append(ef)
    return out, table
