"""Backups: durations, sizes and, per backup kind and config, whether the backup is encrypted.

Durations and sizes come from measurements (the test of the workload's ``backups`` section: step ``<kind>`` = the
backup, step ``<kind>_restore`` = the restore); the encrypted verdicts from ``backups.json`` written by the workload
(scan of every backup for the canary markers and the workload's known plaintext, compressed backups
decompressed first).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tdebench.report.mdkit import md_table
from tdebench.report.fmt import DASH, fmt_value, fmt_value_ci
from tdebench.report.htmlkit import Col, Safe, esc, join, pill, table, tag
from tdebench.report.model import RunSummary
from tdebench.stats.describe import Summary


@dataclass
class BackupRow:
    engine: str
    kind: str
    config: str
    encryption: str
    plain: bool
    backup: tuple[str, str]
    restore: tuple[str, str]
    size: str
    encrypted: bool | None
    hits: int | None
    info: dict[str, Any]
    title: str = "Backups"  # the workload's section: its title and footnote
    note: str = ""


def load_backups(rs: RunSummary) -> dict[str, Any]:
    path = rs.run_dir / "backups.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _summary(rs: RunSummary, engine: str, config: str, test: str, step: str, metric: str) -> Summary | None:
    """The summary of one series, whatever workload its rows name."""
    return next((s for k, s in rs.analysis.summaries.items()
                 if (k.engine, k.config, k.test, k.step, k.metric) == (engine, config, test, step, metric)), None)


def _median(s: Summary | None) -> tuple[str, str]:
    if s is None or s.median is None:
        return DASH, ""
    return fmt_value(s.median, s.unit), fmt_value_ci(s.median_ci_low, s.median_ci_high, s.unit)


def backup_rows(rs: RunSummary) -> list[BackupRow]:
    section = rs.presentation.section("backups")
    if section is None:
        return []
    data = load_backups(rs)
    configs = data.get("configs") if isinstance(data.get("configs"), dict) else {}
    kinds = data.get("kinds") if isinstance(data.get("kinds"), dict) else {}
    out = []
    for es in rs.engines:
        for kind in kinds:
            for r in es.rows:
                verdict = (configs.get(r.label) or {}).get("backups", {}).get(kind)
                if not isinstance(verdict, dict):
                    continue
                where = (rs, es.engine, r.label, section.test)
                size = _summary(*where, kind, "bytes")
                hits = verdict.get("marker_hits", 0) + verdict.get("known_plaintext_hits", 0)
                out.append(BackupRow(es.engine, kind, r.label, r.encryption, r.is_plain,
                                     _median(_summary(*where, kind, "elapsed")),
                                     _median(_summary(*where, f"{kind}_restore", "elapsed")),
                                     fmt_value(size.median, size.unit) if size and size.median else DASH,
                                     verdict.get("encrypted"), hits, kinds.get(kind, {}), section.title,
                                     section.note))
    return out


def verdict_text(row: BackupRow) -> str:
    if row.encrypted is None:
        return "not checked"
    if row.encrypted:
        return "yes"
    return "no (plain twin)" if row.plain else "NO: plaintext"


MECHANISMS = {"tde": "TDE", "fs": "file-system encryption", "sqlcipher": "SQLCipher", "column": "column encryption"}


def sentences(rows: list[BackupRow]) -> list[str]:
    """Plain statements per tool for the encrypted configs."""
    out = []
    for tool in dict.fromkeys(r.info.get("tool", r.kind) for r in rows):
        mine = [r for r in rows if r.info.get("tool", r.kind) == tool and not r.plain and r.encrypted is not None]
        if not mine:
            continue
        kinds = ", ".join(dict.fromkeys(r.kind for r in mine))
        bare = list(dict.fromkeys(r.encryption for r in mine if not r.encrypted))
        safe = [e for e in dict.fromkeys(r.encryption for r in mine if r.encrypted) if e not in bare]
        if bare:
            under = " or ".join(dict.fromkeys(MECHANISMS.get(e.split(":")[0], e) for e in bare))
            why = (f" A logical dump is plaintext even under {under}: the server decrypts the rows it reads."
                   if mine[0].info.get("logical") else " The tool reads the data through the server or the "
                   "mount, which hands it out decrypted.")
            out.append(f"{tool} ({kinds}): the backup is NOT encrypted for {', '.join(bare)}: canaries or known "
                       f"plaintext found in it.{why}")
        if safe:
            out.append(f"{tool} ({kinds}): the backup is encrypted for {', '.join(safe)}: no canary and no known "
                       "plaintext found; restoring it needs the same keys.")
    return out


def html_section(rows: list[BackupRow]) -> Safe:
    cols = [Col("backup kind"), Col("config"), Col("backup (median)", True), Col("restore (median)", True),
            Col("size", True), Col("encrypted"), Col("plaintext hits", True)]
    body = []
    for r in rows:
        kind = {True: "good", False: "neutral" if r.plain else "bad", None: "neutral"}[r.encrypted]
        body.append([join([esc(r.kind), tag("span", r.info.get("description", ""), class_="sub")]),
                     r.encryption or r.config, _with_sub(r.backup), _with_sub(r.restore), r.size,
                     pill(verdict_text(r), kind), DASH if r.hits is None else str(r.hits)])
    parts: list[object] = [tag("h2", rows[0].title), table(cols, body)]
    parts += [tag("p", s, class_="verdict") for s in sentences(rows)]
    if rows[0].note:
        parts.append(tag("p", rows[0].note, class_="note"))
    return tag("section", join(parts), id="backups")


def _with_sub(pair: tuple[str, str]) -> Safe:
    main, sub = pair
    return join([esc(main), tag("span", sub, class_="sub")]) if sub and sub != DASH else esc(main)


def md_lines(rows: list[BackupRow]) -> list[str]:

    body = [[r.kind, r.encryption or r.config, r.backup[0], r.restore[0], r.size, verdict_text(r),
             DASH if r.hits is None else str(r.hits)] for r in rows]
    out = [f"## {rows[0].title}", ""] + md_table(["backup kind", "config", "backup (median)", "restore (median)", "size",
                                         "encrypted", "plaintext hits"], body, {2, 3, 4, 6}) + [""]
    return out + [f"- {s}" for s in sentences(rows)] + [""]
