"""Schema, load and statistics for instances whose SQL is translated (external targets, local MySQL).

The workload hands such an instance canonical (``postgres`` family) DDL; :class:`TranslatedSchemaMixin` runs the
target's own DDL instead (the workload's rendering if it has one, else each statement transpiled, see
:mod:`tdebench.engines.toolkit.dbapi.translate`) and loads through the target's driver
(:mod:`tdebench.engines.toolkit.dbapi.drivers`). The class using it provides ``kind`` (a
:class:`~tdebench.engines.external.target.Kind`), ``translator``, ``tables`` and ``load_methods``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tdebench.api.engine import CANARY_TABLE, Connection, SqlTranslator
from tdebench.api.tables import TableSpec
from tdebench.engines.toolkit.dbapi import drivers
from tdebench.engines.toolkit.dbapi.translate import Translator, drop_table_sql, raw_connection
from tdebench.engines.toolkit.dbapi.kinds import Kind


def _execute_all(raw: Any, statements: list[str]) -> None:
    cur = raw.cursor()
    for statement in statements:
        cur.execute(statement)
    raw.commit()


class TranslatedSchemaMixin:
    """create_schema / create_constraints / bulk_load / analyze in the target's dialect."""

    kind: Kind
    translator: Translator
    tables: dict[str, TableSpec]
    load_methods: set[str]

    def use_translator(self, translator: SqlTranslator | None) -> None:
        """The workload's own renderings come first (see :class:`tdebench.api.engine.SqlTranslator`)."""
        self.translator.workload = translator

    def drop_tables(self, conn: Connection, tables: Sequence[str]) -> None:
        """Drop ``tables`` if they exist, in the target's dialect (the contract of ``Instance.drop_tables``)."""
        self._drop(raw_connection(conn), list(tables))

    def drop_all(self, raw: Any) -> None:
        """Drop the workload's tables (and the canary table) if they exist."""
        self._drop(raw, [*self.tables, CANARY_TABLE])

    def _drop(self, raw: Any, tables: list[str]) -> None:
        cur = raw.cursor()
        if self.kind.module == "pymysql":
            cur.execute("SET SESSION foreign_key_checks = 0")
        for statement in drop_table_sql(self.kind.dialect, tables):
            cur.execute(statement)
        raw.commit()

    def create_schema(self, conn: Connection, statements: Sequence[str], tables: Sequence[TableSpec] = ()) -> None:
        """Drop leftover tables of the workload (the database is reserved for tdebench), then create them."""
        self.tables.update({t.name: t for t in tables})
        raw = raw_connection(conn)
        self.drop_all(raw)
        _execute_all(raw, self.translator.batch(statements))

    def create_constraints(self, conn: Connection, statements: Sequence[str]) -> None:
        """Keys, indexes, foreign keys (MySQL family: without re-checking the loaded data)."""
        raw = raw_connection(conn)
        ddl = self.translator.batch(statements)
        mysql = self.kind.module == "pymysql"
        cur = raw.cursor()
        if mysql:
            cur.execute("SET SESSION foreign_key_checks = 0")
        try:
            _execute_all(raw, ddl)
        finally:
            if mysql:
                cur.execute("SET SESSION foreign_key_checks = 1")

    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        rows, method = drivers.bulk_load(self.kind, raw_connection(conn), table, path)
        self.load_methods.add(method)
        return rows

    def analyze(self, conn: Connection) -> None:
        drivers.analyze(self.kind, raw_connection(conn), list(self.tables))


__all__ = ["TranslatedSchemaMixin"]
