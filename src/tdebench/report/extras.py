"""Report sections beyond the summary: per-operation tables, the workload's own sections (switching, consistency,
backups), storage, the cipher floor, AES vs 3DES.

Each section appears only when the run has its data, so reports without resource samples, per-table storage or
3DES configs are unchanged. :func:`html_sections` and :func:`md_lines` are what the renderers call.
"""

from __future__ import annotations

from dataclasses import dataclass

from tdebench.api.regime import ratio_of
from tdebench.report.mdkit import md_table
from tdebench.report import (aes3des, backups_view, consistency_view, encrypt_view, faults_view, keys_view, steps,
                             storage_view)
from tdebench.report.counters_view import fmt_hit
from tdebench.report.floor import ESTIMATED, CipherTable, EngineFloor, FloorRow, cipher_table, engine_floors
from tdebench.report.fmt import DASH, fmt_bytes, fmt_ci, fmt_pct, fmt_value
from tdebench.report.htmlkit import Col, Safe, join, table, tag
from tdebench.report.model import RunSummary
from tdebench.report.texts import RATIO_METHOD

NAV = [("switching", "Switching"), ("operations", "Per operation"), ("faults", "Faults"), ("consistency", "Consistency"), ("backups", "Backups"),
       ("storage", "Storage"), ("cipher-floor", "Cipher floor"), ("aes-3des", "AES vs 3DES")]


@dataclass
class Extras:
    """Everything the extra sections show, computed once."""

    step_tables: list[steps.StepTable]
    backups: list[backups_view.BackupRow]
    storage: list[storage_view.EngineStorage]
    floors: list[EngineFloor]
    ciphers: CipherTable | None
    pairs: list[aes3des.Pair]
    consistency: list[consistency_view.ConsistencyTable]
    switches: list[encrypt_view.SwitchRow]
    floor_note: str = ""  # what the floor's total row covers, in the workload's words


def compute(rs: RunSummary) -> Extras:
    floors, table_ = engine_floors(rs)
    pairs: list[aes3des.Pair] = []
    if aes3des.needed(rs):
        if table_ is None:
            table_ = cipher_table(rs.run_dir, list(rs.analysis.measurements.encryption.values()))
        pairs = aes3des.pairs(rs, table_.speeds if table_ else None)
    return Extras(steps.step_tables(rs), backups_view.backup_rows(rs), storage_view.engine_storage(rs), floors,
                  table_, pairs, consistency_view.consistency_tables(rs),
                  rs.switches(), rs.presentation.notes.get("cipher_floor", ""))


# cipher floor ------------------------------------------------------------------------------------------
FLOOR_HEADERS = ["config", "step", "hit ratio", "decrypted", "encrypted", "bytes from", "cipher", "cipher floor",
                 "plain (median)", "measured overhead", "overhead 95% CI", "floor / overhead"]
_FLOOR_TEXT = {2, 3, 4, 7, 8, 9, 10, 11}  # right-aligned (numbers)


def _floor_config(r: FloorRow) -> str:
    ratio = ratio_of(r.config)
    return r.encryption if ratio is None else f"{r.encryption} @ memory ratio {ratio:g}"


def floor_cells(ef: EngineFloor) -> list[list[str]]:
    rows = []
    for r in ef.rows:
        o = r.overhead_s
        ov = r.overhead
        overhead = DASH if o is None else f"{fmt_value(o, 's')} ({fmt_pct(ov.overhead_pct if ov else None)})"
        share = DASH if r.floor_share is None else f"{r.floor_share * 100:.1f}%"
        mark = "≈" if r.basis == ESTIMATED else ""
        rows.append([_floor_config(r), r.step, fmt_hit(r.hit_ratio), mark + fmt_bytes(r.read_bytes),
                     mark + fmt_bytes(r.write_bytes), r.basis, r.cipher,
                     fmt_value(r.floor_s, "s"), fmt_value(r.plain_s, "s") if r.plain_s is not None else DASH,
                     overhead, fmt_ci(ov.ci_low_pct, ov.ci_high_pct) if ov else DASH, share])
    return rows


FLOOR_NOTE = ("Cipher floor = bytes decrypted during the step ÷ decrypt speed + bytes encrypted ÷ encrypt speed "
              "(one core): the least CPU time encryption itself adds. Bytes are what crossed the encryption "
              "boundary as the engine counts it (pages it read from or wrote to its files × page size; ≈: the "
              "engine's estimate, see docs/engines), median over trials; 'disk IO (fallback)' rows use the bytes the "
              "server process tree read from and wrote to storage instead, which miss everything the OS page cache "
              "served. Hit ratio = 1 − cache misses / cache requests of the engine's own cache. Floor / overhead "
              "(shown where the overhead's 95% CI lies above 0) near 100% means the cipher explains the overhead; "
              "far below it, the cost is elsewhere (extra IO, key handling, code paths).")


def floor_html(x: Extras) -> Safe:
    parts: list[object] = [tag("h2", "Cipher floor")]
    if x.ciphers is not None:
        parts.append(tag("p", f"Cipher speeds: {x.ciphers.source}.", class_="note"))
    cols = [Col(h, i in _FLOOR_TEXT) for i, h in enumerate(FLOOR_HEADERS)]
    for ef in x.floors:
        parts += [tag("h3", ef.engine), table(cols, floor_cells(ef))]
        parts += [tag("p", n, class_="note") for n in ef.notes]
    parts.append(tag("p", " ".join(t for t in (FLOOR_NOTE, x.floor_note) if t), class_="note"))
    return tag("section", join(parts), id="cipher-floor")


def floor_md(x: Extras) -> list[str]:

    out = ["## Cipher floor", ""]
    if x.ciphers is not None:
        out += [f"_Cipher speeds: {x.ciphers.source}._", ""]
    for ef in x.floors:
        out += [f"### {ef.engine}", ""] + md_table(FLOOR_HEADERS, floor_cells(ef), _FLOOR_TEXT) + [""]
        out += [f"- {n}" for n in ef.notes] + ([""] if ef.notes else [])
    return out + [" ".join(t for t in (FLOOR_NOTE, x.floor_note) if t), ""]


# AES vs 3DES -------------------------------------------------------------------------------------------
def pairs_html(x: Extras) -> Safe:
    parts: list[object] = [tag("h2", "AES vs 3DES")]
    for p in x.pairs:
        headers, rows = aes3des.table_rows(p)
        parts += [tag("h3", f"{p.engine}: {p.aes_spec} vs {p.des_spec}"), tag("p", aes3des.sentence(p),
                                                                             class_="verdict"),
                  table([Col(h, i >= 2) for i, h in enumerate(headers)], rows)]
    parts.append(tag("p", f"3DES / AES = ratio of the times with its 95% interval, paired by block when both "
                          f"have one value per block ({RATIO_METHOD}). The TDE framework study found 3DES 1.4× "
                          "(SELECT) to 3.8× (DELETE) slower than AES-128.", class_="note"))
    return tag("section", join(parts), id="aes-3des")


def pairs_md(x: Extras) -> list[str]:

    out = ["## AES vs 3DES", ""]
    for p in x.pairs:
        headers, rows = aes3des.table_rows(p)
        out += [f"### {p.engine}: {p.aes_spec} vs {p.des_spec}", "", aes3des.sentence(p), ""]
        out += md_table(headers, rows, {2, 3, 4, 5}) + [""]
    return out


# glue ----------------------------------------------------------------------------------------------------
def html_sections(rs: RunSummary) -> list[Safe]:
    """The extra sections in report order (none without data)."""
    x = compute(rs)
    out = []
    if x.switches:
        out.append(encrypt_view.html_section(x.switches))
    if x.step_tables:
        out.append(steps.html_section(x.step_tables))
    if faults_view.entries(rs):
        out.append(faults_view.html_section(rs))
    if keys_view.keyed(rs):
        out.append(keys_view.html_section(rs))
    if x.consistency:
        out.append(consistency_view.html_section(x.consistency))
    if x.backups:
        out.append(backups_view.html_section(x.backups))
    if x.storage:
        out.append(storage_view.html_section(x.storage))
    if x.floors:
        out.append(floor_html(x))
    if x.pairs:
        out.append(pairs_html(x))
    return out


def md_lines(rs: RunSummary) -> list[str]:
    """The same sections as Markdown."""
    x = compute(rs)
    out: list[str] = encrypt_view.md_lines(x.switches) if x.switches else []
    out += steps.md_lines(x.step_tables)
    out += faults_view.md_lines(rs) if faults_view.entries(rs) else []
    out += keys_view.md_lines(rs) if keys_view.keyed(rs) else []
    out += consistency_view.md_lines(x.consistency) if x.consistency else []
    out += backups_view.md_lines(x.backups) if x.backups else []
    out += storage_view.md_lines(x.storage)
    out += floor_md(x) if x.floors else []
    out += pairs_md(x) if x.pairs else []
    return out
