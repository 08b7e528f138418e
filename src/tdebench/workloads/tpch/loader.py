"""Load TPC-H data into an instance: tables, bulk load per table, then keys, indexes, statistics."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.workloads.tpch import schema


@dataclass
class LoadResult:
    """Seconds and rows per table plus the time for constraints/indexes and statistics."""

    tables: dict[str, tuple[int, float]] = field(default_factory=dict)  # table -> (rows, seconds)
    constraints_seconds: float = 0.0
    analyze_seconds: float = 0.0
    total_seconds: float = 0.0

    @property
    def rows(self) -> int:
        return sum(rows for rows, _ in self.tables.values())


def load_tpch(instance: Instance, dialect: Dialect, data_dir: Path,
              on_table: Callable[[str, int, float], None] | None = None) -> LoadResult:
    """Create the schema, bulk-load every table, then add keys and indexes and analyze."""
    result = LoadResult()
    started = time.perf_counter()
    conn = instance.connect()
    try:
        instance.create_schema(conn, schema.create_table_sql(dialect.family), schema.TABLES)
        for spec in schema.TABLES:
            table = spec.name
            t0 = time.perf_counter()
            rows = instance.bulk_load(conn, spec, data_dir / f"{table}.tbl")
            seconds = time.perf_counter() - t0
            result.tables[table] = (rows, seconds)
            if on_table:
                on_table(table, rows, seconds)
        t0 = time.perf_counter()
        instance.create_constraints(conn, schema.constraint_and_index_sql(dialect.family))
        result.constraints_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        instance.analyze(conn)
        result.analyze_seconds = time.perf_counter() - t0
    finally:
        conn.close()
    result.total_seconds = time.perf_counter() - started
    return result
