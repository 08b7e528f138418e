"""Load TPC-H data into an instance: tables, bulk load per table, then keys, indexes, statistics."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.api.server import ServerAccess
from tdebench.errors import RunFailed
from tdebench.workloads.loading import TableLoads, bulk_load_tables, timed
from tdebench.workloads.tpch import schema


@dataclass
class LoadResult(TableLoads):
    """Seconds and rows per table plus the time for constraints/indexes and statistics."""

    constraints_seconds: float = 0.0
    analyze_seconds: float = 0.0
    total_seconds: float = 0.0


def _server(instance: Instance) -> ServerAccess:
    access = instance.server_access()
    if access is None:
        raise RunFailed(f"{instance.config.label}: its server cannot be reached for another database",
                        "load TPC-H into the instance's own database (its engine's switch covers one database)")
    return access


def load_tpch(instance: Instance, dialect: Dialect, data_dir: Path,
              on_table: Callable[[str, int, float], None] | None = None, database: str | None = None) -> LoadResult:
    """Create the schema, bulk-load every table, then add keys and indexes and analyze; ``database``: into that
    database of the instance's server (:meth:`ServerAccess.connect_to <tdebench.api.server.ServerAccess.connect_to>`)
    instead of the instance's own."""
    result = LoadResult()
    started = time.perf_counter()
    conn = instance.connect() if database is None else _server(instance).connect_to(database)
    own_tables = dict(instance.tables)
    try:
        instance.create_schema(conn, schema.create_table_sql(dialect), schema.TABLES)
        if database is not None:  # the instance's own tables stay what its workload created
            instance.tables.clear()
            instance.tables.update(own_tables)
        files = [(spec, [data_dir / f"{spec.name}.tbl"]) for spec in schema.TABLES]
        bulk_load_tables(instance, conn, files, result, on_table)
        result.constraints_seconds = timed(
            lambda: instance.create_constraints(conn, schema.constraint_and_index_sql(dialect)))
        result.analyze_seconds = timed(lambda: instance.analyze(conn))
    finally:
        conn.close()
    result.total_seconds = time.perf_counter() - started
    return result
