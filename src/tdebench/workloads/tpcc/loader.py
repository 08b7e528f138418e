"""Load the generated TPC-C population into an instance: tables, bulk load, indexes, statistics.

Every engine loads through its ``bulk_load`` (LOAD DATA LOCAL INFILE, COPY, executemany in one transaction;
for pgcrypto column encryption COPY into a staging table and INSERT ... SELECT encrypting, into views the
engine makes updatable since TPC-C updates rows).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.workloads.tpcc import procs, schema
from tdebench.workloads.tpcc.datagen import files_of


@dataclass
class LoadResult:
    """Rows and seconds per table, seconds for indexes and statistics."""

    tables: dict[str, tuple[int, float]] = field(default_factory=dict)
    index_seconds: float = 0.0
    analyze_seconds: float = 0.0
    total_seconds: float = 0.0

    @property
    def rows(self) -> int:
        return sum(rows for rows, _ in self.tables.values())


def load_tpcc(instance: Instance, dialect: Dialect, data_dir: Path, warehouses: int,
              on_table: Callable[[str, int, float], None] | None = None, procedures: bool = False) -> LoadResult:
    """Create the schema, load every table, then the secondary indexes and statistics."""
    result = LoadResult()
    started = time.perf_counter()
    conn = instance.connect()
    try:
        instance.create_schema(conn, schema.create_table_sql(dialect.family), schema.TABLE_SPECS)
        for t in schema.TABLES:
            t0 = time.perf_counter()
            rows = sum(instance.bulk_load(conn, t.spec, data_dir / f) for f in files_of(t.name, warehouses))
            seconds = time.perf_counter() - t0
            result.tables[t.name] = (rows, seconds)
            if on_table:
                on_table(t.name, rows, seconds)
        t0 = time.perf_counter()
        instance.create_constraints(conn, schema.index_sql(dialect.family))
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
