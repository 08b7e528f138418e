"""Load the generated TPC-C population into an instance: tables, bulk load, indexes, statistics.

Every engine loads through its ``bulk_load`` (LOAD DATA LOCAL INFILE, COPY, executemany in one transaction;
for pgcrypto column encryption COPY into a staging table and INSERT ... SELECT encrypting, into views the
engine makes updatable since TPC-C updates rows).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.workloads.loading import TableLoads, bulk_load_tables, timed
from tdebench.workloads.tpcc import procs, schema
from tdebench.workloads.tpcc.datagen import files_of


@dataclass
class LoadResult(TableLoads):
    """Rows and seconds per table, seconds for indexes and statistics."""

    index_seconds: float = 0.0
    analyze_seconds: float = 0.0
    total_seconds: float = 0.0


def load_tpcc(instance: Instance, dialect: Dialect, data_dir: Path, warehouses: int,
              on_table: Callable[[str, int, float], None] | None = None, procedures: bool = False) -> LoadResult:
    """Create the schema, load every table, then the secondary indexes and statistics."""
    result = LoadResult()
    started = time.perf_counter()
    conn = instance.connect()
    try:
        instance.create_schema(conn, schema.create_table_sql(dialect), schema.TABLE_SPECS)
        files = [(t.spec, [data_dir / f for f in files_of(t.name, warehouses)]) for t in schema.TABLES]
        bulk_load_tables(instance, conn, files, result, on_table)
        result.index_seconds = timed(lambda: instance.create_constraints(conn, schema.index_sql(dialect)))
        result.analyze_seconds = timed(lambda: instance.analyze(conn))
        if procedures:
            procs.install(conn, dialect)
    finally:
        conn.close()
    result.total_seconds = time.perf_counter() - started
    return result
