"""Report sections beyond TPC-H: per-operation tables, TPC-C consistency, backups, storage, the cipher floor,
AES vs 3DES.

Each section appears only when the run has its data, so TPC-H reports without resource samples, per-table
storage or 3DES configs are unchanged. :func:`html_sections` and :func:`md_lines` are what the renderers call.
"""

from __future__ import annotations

from dataclasses import dataclass

from tdebench.report import aes3des, backups_view, consistency_view, steps, storage_view
from tdebench.report.floor import CipherTable, EngineFloor, cipher_table, engine_floors
from tdebench.report.fmt import DASH, fmt_bytes, fmt_ci, fmt_pct, fmt_value
from tdebench.report.htmlkit import Col, Safe, join, table, tag
from tdebench.report.model import RunSummary
from tdebench.report.texts import RATIO_METHOD

NAV = [("operations", "Per operation"), ("consistency", "TPC-C consistency"), ("backups", "Backups"),
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


def compute(rs: RunSummary) -> Extras:
    floors, table_ = engine_floors(rs)
    pairs: list[aes3des.Pair] = []
    if aes3des.needed(rs):
        if table_ is None:
            table_ = cipher_table(rs.run_dir, list(rs.analysis.measurements.encryption.values()))
        pairs = aes3des.pairs(rs, table_.speeds if table_ else None)
    return Extras(steps.step_tables(rs), backups_view.backup_rows(rs), storage_view.engine_storage(rs), floors,
                  table_, pairs, consistency_view.consistency_tables(rs))


# cipher floor ------------------------------------------------------------------------------------------
FLOOR_HEADERS = ["config", "step", "server read", "server written", "cipher", "cipher floor", "plain (median)",
                 "measured overhead", "overhead 95% CI", "floor / overhead"]


def floor_cells(ef: EngineFloor) -> list[list[str]]:
    rows = []
    for r in ef.rows:
        o = r.overhead_s
        overhead = DASH if o is None else f"{fmt_value(o, 's')} ({fmt_pct(r.overhead_pct)})"
        share = DASH if r.floor_share is None else f"{r.floor_share * 100:.1f}%"
        rows.append([r.encryption, r.step, fmt_bytes(r.read_bytes), fmt_bytes(r.write_bytes), r.cipher,
                     fmt_value(r.floor_s, "s"), fmt_value(r.plain_s, "s") if r.plain_s is not None else DASH,
                     overhead, fmt_ci(r.ci_low_pct, r.ci_high_pct), share])
    return rows


FLOOR_NOTE = ("Cipher floor = bytes the server read during the step ÷ decrypt speed + bytes it wrote ÷ encrypt "
              "speed (one core): the least CPU time encryption itself adds. Bytes are /proc IO counters of the "
              "server process tree (median over trials): reads served from the OS page cache and from the "
              "DBMS's own buffer pool are not counted, and neither is decryption of pages already in memory. "
              "Floor / overhead (shown where the overhead's 95% CI lies above 0) near 100% means the cipher "
              "explains the overhead; far below it, the cost is elsewhere (extra IO, key handling, code paths). "
              "Tools that read the data files themselves (mariadb-backup) do their IO outside the server and "
              "are not counted.")


def floor_html(x: Extras) -> Safe:
    parts: list[object] = [tag("h2", "Cipher floor")]
    if x.ciphers is not None:
        parts.append(tag("p", f"Cipher speeds: {x.ciphers.source}.", class_="note"))
    cols = [Col(h, i >= 2 and h not in ("cipher",)) for i, h in enumerate(FLOOR_HEADERS)]
    for ef in x.floors:
        parts += [tag("h3", ef.engine), table(cols, floor_cells(ef))]
        parts += [tag("p", n, class_="note") for n in ef.notes]
    parts.append(tag("p", FLOOR_NOTE, class_="note"))
    return tag("section", join(parts), id="cipher-floor")


def floor_md(x: Extras) -> list[str]:
    from tdebench.report.render_md import md_table

    out = ["## Cipher floor", ""]
    if x.ciphers is not None:
        out += [f"_Cipher speeds: {x.ciphers.source}._", ""]
    for ef in x.floors:
        out += [f"### {ef.engine}", ""] + md_table(FLOOR_HEADERS, floor_cells(ef), set(range(2, 10)) - {4}) + [""]
        out += [f"- {n}" for n in ef.notes] + ([""] if ef.notes else [])
    return out + [FLOOR_NOTE, ""]


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
    from tdebench.report.render_md import md_table

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
    if x.step_tables:
        out.append(steps.html_section(x.step_tables))
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
    out: list[str] = []
    out += steps.md_lines(x.step_tables)
    out += consistency_view.md_lines(x.consistency) if x.consistency else []
    out += backups_view.md_lines(x.backups) if x.backups else []
    out += storage_view.md_lines(x.storage)
    out += floor_md(x) if x.floors else []
    out += pairs_md(x) if x.pairs else []
    return out
