"""Schema, load and statistics for instances whose SQL is translated (external targets, local MySQL).

The workload hands such an instance canonical (``postgres``) DDL; :class:`TranslatedSchemaMixin` replaces it
with the target dialect's own DDL (:mod:`tdebench.engines.external_sql`) and loads through the target's
driver (:mod:`tdebench.engines.external_drivers`). The class using it provides ``kind`` (a
:class:`~tdebench.engines.external_target.Kind`), ``translator`` and ``load_methods``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tdebench.engines import external_drivers as drivers
from tdebench.engines.base import CANARY_TABLE, Connection
from tdebench.engines.external_sql import (WORKLOAD_DIALECT, Translator, constraint_sql, create_table_sql,
                                          drop_table_sql, raw_connection)
from tdebench.engines.external_target import Kind
from tdebench.workloads.tpch import schema

TPCH_TABLES = [t.name for t in schema.TABLES]


def _execute_all(raw: Any, statements: list[str]) -> None:
    cur = raw.cursor()
    for statement in statements:
        cur.execute(statement)
    raw.commit()


class TranslatedSchemaMixin:
    """create_schema / create_constraints / bulk_load / analyze in the target's dialect."""

    kind: Kind
    translator: Translator
    load_methods: set[str]

    def drop_tables(self, raw: Any) -> None:
        """Drop the TPC-H tables (and the canary table) if they exist."""
        cur = raw.cursor()
        if self.kind.module == "pymysql":
            cur.execute("SET SESSION foreign_key_checks = 0")
        for statement in drop_table_sql(self.kind.dialect, [*TPCH_TABLES, CANARY_TABLE]):
            cur.execute(statement)
        raw.commit()

    def _statements(self, given: list[str], canonical: list[str], target: tuple[str, ...]) -> list[str]:
        """The target's own DDL for the canonical statements, else each statement translated."""
        if list(given) == canonical:
            return list(target)
        return [self.translator(s) for s in given]

    def create_schema(self, conn: Connection, statements: list[str]) -> None:
        """Drop leftover TPC-H tables (the database is reserved for tdebench), then create them."""
        raw = raw_connection(conn)
        self.drop_tables(raw)
        _execute_all(raw, self._statements(statements, schema.create_table_sql(WORKLOAD_DIALECT),
                                           create_table_sql(self.kind.dialect)))

    def create_constraints(self, conn: Connection, statements: list[str]) -> None:
        """Keys, indexes, foreign keys (MySQL family: without re-checking dbgen's consistent data)."""
        raw = raw_connection(conn)
        ddl = self._statements(statements, schema.constraint_and_index_sql(WORKLOAD_DIALECT),
                               constraint_sql(self.kind.dialect))
        mysql = self.kind.module == "pymysql"
        cur = raw.cursor()
        if mysql:
            cur.execute("SET SESSION foreign_key_checks = 0")
        try:
            _execute_all(raw, ddl)
        finally:
            if mysql:
                cur.execute("SET SESSION foreign_key_checks = 1")

    def bulk_load(self, conn: Connection, table: str, columns: list[str], path: Path) -> int:
        rows, method = drivers.bulk_load(self.kind, raw_connection(conn), table, columns, path)
        self.load_methods.add(method)
        return rows

    def analyze(self, conn: Connection) -> None:
        drivers.analyze(self.kind, raw_connection(conn), TPCH_TABLES)


__all__ = ["TPCH_TABLES", "TranslatedSchemaMixin"]
