"""Storage per config: data-directory bytes and per-table data and index bytes, with growth vs the plain twin.

Read from the manifest: ``configs[].storage_tables`` (:func:`tdebench.measure.storage.storage_breakdown`,
written by the CRUD, load and backup workloads) or ``configs[].storage`` (an engine's own breakdown, e.g.
PostgreSQL's), and ``configs[].storage_bytes``. Shown only when some config has a per-table breakdown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tdebench.report.mdkit import md_table
from tdebench.report.fmt import DASH, fmt_bytes
from tdebench.report.htmlkit import Col, Safe, join, table, tag
from tdebench.report.model import RunSummary


@dataclass
class StorageRow:
    config: str
    encryption: str
    plain: bool
    data_dir: int | None
    tables: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass
class EngineStorage:
    engine: str
    plain: str | None
    rows: list[StorageRow]
    tables: list[str]
    note: str = ""


def _breakdown(entry: dict[str, Any]) -> dict[str, Any]:
    for key in ("storage_tables", "storage"):
        value = entry.get(key)
        if isinstance(value, dict) and isinstance(value.get("tables"), dict):
            return value
    return {}


def engine_storage(rs: RunSummary) -> list[EngineStorage]:
    out = []
    for es in rs.engines:
        rows = []
        for r in es.rows:
            entry = rs.files.manifest_config(r.label)
            b = _breakdown(entry)
            tables = {str(n): t for n, t in b.get("tables", {}).items() if isinstance(t, dict)}
            data_dir = b.get("data_dir_bytes", entry.get("storage_bytes"))
            rows.append(StorageRow(r.label, r.encryption, r.is_plain, int(data_dir) if data_dir else None, tables))
        if not any(r.tables for r in rows) and not any("storage_tables" in rs.files.manifest_config(r.label)
                                                      for r in es.rows):
            continue
        names = list(dict.fromkeys(n for r in rows for n in r.tables))
        notes = {str(_breakdown(rs.files.manifest_config(r.config)).get("note", "")) for r in rows} - {""}
        out.append(EngineStorage(es.engine, es.plain, rows, names, "; ".join(sorted(notes))))
    return out


def growth(value: int | None, base: int | None) -> str:
    return f"×{value / base:.3f}" if value and base else DASH


def _cell(row: StorageRow, base: StorageRow | None, table_name: str, key: str) -> tuple[str, str]:
    value = row.tables.get(table_name, {}).get(key)
    if value is None:
        return DASH, ""
    ref = base.tables.get(table_name, {}).get(key) if base and base is not row else None
    return fmt_bytes(value), growth(value, ref) if ref else ""


def table_rows(es: EngineStorage) -> tuple[list[str], list[list[tuple[str, str]]]]:
    """A row per table (and the data directory); per config its data and index bytes with the growth factor."""
    base = next((r for r in es.rows if r.config == es.plain), None)
    headers = ["table"] + [f"{r.encryption or r.config} {k}" for r in es.rows for k in ("data", "index")]
    rows = [[("data directory (all files)", "")] + [
        c for r in es.rows for c in ((fmt_bytes(r.data_dir) if r.data_dir else DASH,
                                      growth(r.data_dir, base.data_dir) if base and base is not r else ""), ("", ""))]]
    for t in es.tables:
        rows.append([(t, "")] + [c for r in es.rows for c in (_cell(r, base, t, "table_bytes"),
                                                            _cell(r, base, t, "index_bytes"))])
    return headers, rows


def html_section(engines: list[EngineStorage]) -> Safe:
    parts: list[object] = [tag("h2", "Storage")]
    for es in engines:
        headers, rows = table_rows(es)
        cols = [Col(h, i > 0) for i, h in enumerate(headers)]
        body = [[join([main, tag("span", sub, class_="sub")]) if sub else main for main, sub in r] for r in rows]
        parts += [tag("h3", es.engine), table(cols, body)]
        if es.note:
            parts.append(tag("p", es.note, class_="note"))
    parts.append(tag("p", "Sizes right after the load; ×n = growth factor vs the plain twin. Data = the rows "
                          "(clustered index / heap incl. TOAST), index = secondary and primary-key indexes "
                          "stored apart from the rows.", class_="note"))
    return tag("section", join(parts), id="storage")


def md_lines(engines: list[EngineStorage]) -> list[str]:

    out: list[str] = []
    for es in engines:
        headers, rows = table_rows(es)
        body = [[f"{main} ({sub})" if sub else main for main, sub in r] for r in rows]
        out += [f"## Storage: {es.engine}", ""] + md_table(headers, body, set(range(1, len(headers)))) + [""]
        if es.note:
            out += [f"_{es.note}_", ""]
    return out
