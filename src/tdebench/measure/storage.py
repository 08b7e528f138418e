"""Storage sizes for any engine: data-directory bytes and per-table data and index bytes.

* MariaDB: ``ANALYZE TABLE`` (so InnoDB's size statistics are current), then ``information_schema.TABLES``
  ``DATA_LENGTH`` (clustered index = the rows), ``INDEX_LENGTH`` (secondary indexes) and ``DATA_FREE``.
* PostgreSQL: ``pg_table_size`` (heap + TOAST + maps) and ``pg_indexes_size`` of the relation that stores
  the table (``<table>_enc`` under pgcrypto column encryption).
* SQLite: per table only where the SQLite library has the ``dbstat`` table (Python's own sqlite3 does, and
  can read a *plain* database file); SQLCipher's build lacks it, so for encrypted files only the database
  total is known: ``(page_count - freelist_count) × page_size``.

:func:`storage_breakdown` returns the same shape as the PostgreSQL engine's own ``storage_breakdown``
(``tables`` → ``table_bytes``/``index_bytes``/``total_bytes``/``rows``, ``totals``, ``data_dir_bytes``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from tdebench.api.engine import CANARY_TABLE, Connection, Instance
from tdebench.encryption import redact

KEYS = ("table_bytes", "index_bytes", "total_bytes")


def _rows(conn: Connection, sql: str) -> list[tuple[Any, ...]]:
    cur = conn.cursor()
    cur.execute(sql)
    rows = list(cur.fetchall())
    conn.commit()
    return rows


def relation(instance: Instance, table: str) -> str:
    """The relation holding ``table``'s rows (engines with decrypting views store them elsewhere)."""
    return instance.relation_name(table)


def mariadb_sizes(conn: Connection, tables: list[str]) -> dict[str, dict[str, int]]:
    """Per table: data, index and free bytes and the row estimate, after ANALYZE TABLE. A name ``db.table`` is
    looked up in database ``db`` of the same server (and keeps that name), any other in the connection's."""
    if not tables:
        return {}
    _rows(conn, "ANALYZE TABLE " + ", ".join(".".join(f"`{part}`" for part in t.split(".", 1)) for t in tables))
    (current,), = _rows(conn, "SELECT DATABASE()")
    wanted = {(t.split(".", 1)[0] if "." in t else str(current), t.split(".", 1)[-1]): t for t in tables}
    pairs = " OR ".join(f"(table_schema = '{schema}' AND table_name = '{name}')" for schema, name in wanted)
    out = {}
    for schema, name, rows, data, index, free in _rows(
            conn, "SELECT table_schema, table_name, table_rows, data_length, index_length, data_free "
                  f"FROM information_schema.tables WHERE {pairs}"):
        key = wanted.get((str(schema), str(name)))
        if key is not None:
            out[key] = {"rows": int(rows or 0), "table_bytes": int(data or 0), "index_bytes": int(index or 0),
                        "free_bytes": int(free or 0), "total_bytes": int(data or 0) + int(index or 0)}
    return out


def postgres_sizes(conn: Connection, instance: Instance, tables: list[str]) -> dict[str, dict[str, int]]:
    out = {}
    for table in tables:
        rel = relation(instance, table)
        found = _rows(conn, f"SELECT to_regclass('{rel}') IS NOT NULL")
        if not found or not found[0][0]:
            continue
        (heap, index, est), = _rows(conn, f"SELECT pg_table_size('{rel}'), pg_indexes_size('{rel}'), "
                                          f"(SELECT reltuples::bigint FROM pg_class WHERE oid = '{rel}'::regclass)")
        out[table] = {"rows": max(int(est or 0), 0), "table_bytes": int(heap), "index_bytes": int(index),
                      "total_bytes": int(heap) + int(index), "relation": rel}
    return out


def sqlite_total(conn: Connection) -> int:
    """Bytes of pages in use (free pages excluded) of the main database."""
    (pages,), = _rows(conn, "PRAGMA page_count")
    (free,), = _rows(conn, "PRAGMA freelist_count")
    (size,), = _rows(conn, "PRAGMA page_size")
    return (int(pages) - int(free)) * int(size)


def sqlite_dbstat(path: Path, tables: list[str]) -> dict[str, dict[str, int]] | None:
    """Per-table pages from dbstat through Python's sqlite3, for plain database files only."""
    try:
        with open(path, "rb") as handle:
            if handle.read(16) != b"SQLite format 3\x00":
                return None
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except (OSError, sqlite3.Error):
        return None
    try:
        pages = conn.execute("SELECT s.name, m.type, m.tbl_name, SUM(s.pgsize) FROM dbstat s "
                             "JOIN sqlite_master m ON m.name = s.name GROUP BY s.name").fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    out = {t: {"rows": 0, "table_bytes": 0, "index_bytes": 0, "total_bytes": 0} for t in tables}
    for _name, kind, table, size in pages:
        if table in out:
            out[table]["index_bytes" if kind == "index" else "table_bytes"] += int(size)
            out[table]["total_bytes"] += int(size)
    return out


def table_sizes(instance: Instance, tables: list[str], conn: Connection | None = None) -> dict[str, dict[str, int]]:
    """Per-table sizes from the instance's storage catalog (empty dict where there is none, e.g. SQLCipher
    without dbstat); uses ``conn`` or a new connection. An instance that reads its server's catalog itself
    (:meth:`Instance.catalog_sizes <tdebench.api.engine.Instance.catalog_sizes>`, e.g. an external target whose
    connection rewrites SQL) is asked directly."""
    own_sizes = instance.catalog_sizes(tables)
    if own_sizes is not None:
        return own_sizes
    own = conn is None
    conn = conn or instance.connect()
    catalog = instance.dialect.storage_catalog
    try:
        if catalog == "information_schema":
            return mariadb_sizes(conn, tables)
        if catalog == "pg_class":
            return postgres_sizes(conn, instance, tables)
        file = instance.database_file() if catalog == "dbstat" else None
        found = sqlite_dbstat(file.path, tables) if file is not None else None
        if found is None:
            return {}
        for table in tables:
            (count,), = _rows(conn, f"SELECT COUNT(*) FROM {table}")
            found[table]["rows"] = int(count)
        return found
    finally:
        if own:
            conn.close()


def user_tables(instance: Instance, conn: Connection) -> list[str]:
    """Every table of the benchmark database except the canary table (logical names)."""
    catalog = instance.dialect.storage_catalog
    if catalog == "information_schema":
        sql = ("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() "
               "AND table_type = 'BASE TABLE'")
    elif catalog == "pg_class":
        sql = ("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
               "AND table_type IN ('BASE TABLE', 'VIEW')")
    elif catalog == "dbstat":
        sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    else:
        return list(instance.tables)
    names = sorted(str(r[0]) for r in _rows(conn, sql))
    logical = [n for n in names if not (n.endswith("_enc") and n[:-4] in names)]
    return [n for n in logical if not n.startswith(CANARY_TABLE)]


def storage_breakdown(instance: Instance, tables: list[str] | None = None) -> dict[str, Any]:
    """Data-directory bytes plus per-table data/index bytes (all user tables when ``tables`` is None); the
    engine's own breakdown where it has one (:meth:`Instance.storage_breakdown`)."""
    own = instance.storage_breakdown()
    if own is not None:
        return own
    conn = instance.connect()
    catalog = instance.dialect.storage_catalog
    try:
        names = tables if tables is not None else user_tables(instance, conn)
        sizes = table_sizes(instance, names, conn)
        total = sqlite_total(conn) if catalog == "dbstat" else None
    finally:
        conn.close()
    out: dict[str, Any] = {"tables": sizes, "totals": {k: sum(t[k] for t in sizes.values()) for k in KEYS},
                           "data_dir_bytes": instance.storage_bytes(), "method": METHODS.get(catalog, "")}
    if total is not None:
        out["database_bytes"] = total
        if not sizes:
            out["note"] = "per-table sizes need SQLite's dbstat, which this (SQLCipher) library lacks"
    return out


METHODS = {
    "information_schema": "ANALYZE TABLE, then information_schema.TABLES data_length / index_length",
    "pg_class": "pg_table_size / pg_indexes_size of the storing relation",
    "dbstat": "dbstat page sizes (plain files, Python's sqlite3); (page_count - freelist_count) x page_size",
}


def growth(baseline: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Growth factors other / baseline per table and key, and of the data directory (None where unknown)."""
    def ratio(a: Any, b: Any) -> float | None:
        return round(b / a, 4) if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a else None

    tables = {name: {k: ratio(sizes.get(k), other.get("tables", {}).get(name, {}).get(k)) for k in KEYS}
              for name, sizes in baseline.get("tables", {}).items()}
    return {"tables": tables, "data_dir_bytes": ratio(baseline.get("data_dir_bytes"), other.get("data_dir_bytes")),
            "database_bytes": ratio(baseline.get("database_bytes"), other.get("database_bytes"))}


def config_storage(instance: Instance, tables: list[str] | None) -> dict[str, Any]:
    """Per-table data/index bytes of a provisioned config: the engine's own breakdown, else the generic one; an
    ``error`` entry instead when neither can be read (sizes are facts, never a reason to fail a run)."""
    try:
        own = instance.storage_breakdown()
        return own if own is not None else storage_breakdown(instance, tables)
    except Exception as exc:  # noqa: BLE001 - sizes are facts, never a reason to fail a run
        return {"error": redact(str(exc))[:300]}
