"""Load the generated TPC-C population into an instance: tables, bulk load, indexes, statistics.

MariaDB and PostgreSQL load through the engine's ``bulk_load`` (LOAD DATA LOCAL INFILE, COPY; for
pgcrypto column encryption COPY into a staging table and INSERT ... SELECT encrypting). SQLite's
``bulk_load`` only knows TPC-H's column types, so TPC-C rows go in with ``executemany`` in one
transaction (SQLite's type affinity turns the text into numbers).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tdebench.engines.base import Connection, Instance
from tdebench.workloads.tpcc import procs, schema
from tdebench.workloads.tpcc.datagen import files_of
from tdebench.workloads.tpcc.pgcolumn import install_update_triggers

_BATCH = 10_000


@dataclass
class LoadResult:
    """Rows and seconds per table, seconds for indexes and statistics, views made updatable."""

    tables: dict[str, tuple[int, float]] = field(default_factory=dict)
    index_seconds: float = 0.0
    analyze_seconds: float = 0.0
    total_seconds: float = 0.0
    updatable_views: list[str] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(rows for rows, _ in self.tables.values())


def _sqlite_load(conn: Connection, table: str, columns: list[str], path: Path) -> int:
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
    cur = conn.cursor()
    rows = 0
    cur.execute("BEGIN")
    with open(path, encoding="ascii") as handle:
        batch: list[list[str]] = []
        for line in handle:
            batch.append(line.rstrip("\n").split("|")[:-1])
            if len(batch) >= _BATCH:
                cur.executemany(sql, batch)
                rows += len(batch)
                batch.clear()
        if batch:
            cur.executemany(sql, batch)
            rows += len(batch)
    cur.execute("COMMIT")
    return rows


def load_table(instance: Instance, dialect: str, conn: Connection, table: str, path: Path) -> int:
    """One ``.tbl`` file into ``table`` by the fastest path of the dialect; returns rows."""
    columns = schema.table(table).column_names
    if dialect == "sqlite":
        return _sqlite_load(conn, table, columns, path)
    return instance.bulk_load(conn, table, columns, path)


def load_tpcc(instance: Instance, dialect: str, data_dir: Path, warehouses: int,
              on_table: Callable[[str, int, float], None] | None = None, procedures: bool = False) -> LoadResult:
    """Create the schema, load every table, then the secondary indexes and statistics."""
    result = LoadResult()
    started = time.perf_counter()
    conn = instance.connect()
    try:
        instance.create_schema(conn, schema.create_table_sql(dialect))
        result.updatable_views = install_update_triggers(
            instance, conn, [(t.name, t.column_names, t.primary_key) for t in schema.TABLES])
        for t in schema.TABLES:
            t0 = time.perf_counter()
            rows = sum(load_table(instance, dialect, conn, t.name, data_dir / f) for f in files_of(t.name, warehouses))
            seconds = time.perf_counter() - t0
            result.tables[t.name] = (rows, seconds)
            if on_table:
                on_table(t.name, rows, seconds)
        t0 = time.perf_counter()
        instance.create_constraints(conn, schema.index_sql(dialect))
        result.index_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        instance.analyze(conn)
        result.analyze_seconds = time.perf_counter() - t0
        if procedures:
            procs.install(conn, dialect)
    finally:
        conn.close()
    result.total_seconds = time.perf_counter() - started
    return result
