"""SQL for servers whose statements are rewritten on the way (external targets, a local MySQL).

A workload hands such an instance its canonical SQL (the ``postgres`` family of
:mod:`tdebench.api.dialect`); :class:`TranslatingConnection` sits between the workload and the driver and
rewrites each statement once (cached) for the target's dialect (``mysql``, ``mariadb``, ``postgres``, ``tsql``,
``oracle``):

* the workload's own rendering first (:class:`tdebench.api.engine.SqlTranslator`; TPC-H re-renders its queries
  exactly as ``tdebench script`` writes them, and gives each server its own DDL);
* a statement with driver parameters only gets the target driver's parameter markers (``:1, :2, ...`` for
  oracledb);
* anything else is transpiled with sqlglot from ``postgres`` to the target dialect.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from tdebench.api.engine import SqlTranslator
from tdebench.sqltext.dialects import SQL_DIALECTS
from tdebench.sqltext.transpile import transpile

WORKLOAD_FAMILY = "postgres"  # the SQL family the workload hands to a translating instance
#: the dialects of servers reached by URL (tsql, oracle, mysql, mariadb, postgres)
TARGET_DIALECTS = tuple(d.name for d in SQL_DIALECTS if d.url_scheme)
_PARAM = re.compile(r"%s")


def drop_table_sql(target: str, tables: list[str]) -> list[str]:
    """Statements dropping ``tables`` (children first) if they exist; Oracle's is a PL/SQL block per table."""
    ordered = list(reversed(tables))
    if target in ("mysql", "mariadb"):
        return [f"DROP TABLE IF EXISTS {', '.join(ordered)}"]
    if target == "postgres":
        return [f"DROP TABLE IF EXISTS {', '.join(ordered)} CASCADE"]
    if target == "tsql":  # SQL Server 2016+
        return [f"DROP TABLE IF EXISTS {t}" for t in ordered]
    return [f"BEGIN EXECUTE IMMEDIATE 'DROP TABLE {t} CASCADE CONSTRAINTS PURGE'; "
            f"EXCEPTION WHEN OTHERS THEN IF SQLCODE != -942 THEN RAISE; END IF; END;" for t in ordered]


class Translator:
    """Rewrites workload statements for one target dialect; results are cached (thread-safe)."""

    def __init__(self, target: str, workload: SqlTranslator | None = None) -> None:
        if target not in TARGET_DIALECTS:
            raise ValueError(f"unknown target dialect {target!r}")
        self.target = target
        self.workload = workload
        self._cache: dict[tuple[str, bool], str] = {}
        self._lock = threading.Lock()
        self.sources: dict[str, int] = {"workload": 0, "parameters": 0, "sqlglot": 0}

    @property
    def identity(self) -> bool:
        return self.target == WORKLOAD_FAMILY

    def batch(self, statements: Sequence[str]) -> list[str]:
        """A batch of statements (DDL) for the target: the workload's own, else each one rewritten."""
        if self.identity:
            return list(statements)
        own = self.workload.statements(statements, self.target) if self.workload is not None else None
        if own is not None:
            self.sources["workload"] += 1
            return own
        return [self(s) for s in statements]

    def __call__(self, sql: str, has_params: bool = False) -> str:
        if self.identity:
            return sql
        key = (sql, has_params)
        with self._lock:
            cached = self._cache.get(key)
        if cached is None:
            cached = self._translate(sql, has_params)
            with self._lock:
                self._cache[key] = cached
        return cached

    def _translate(self, sql: str, has_params: bool) -> str:
        if has_params:
            self.sources["parameters"] += 1
            return self.markers(sql)
        own = self.workload.statement(sql, self.target) if self.workload is not None else None
        if own is not None:
            self.sources["workload"] += 1
            return own
        self.sources["sqlglot"] += 1
        return transpile(sql, self.target)

    def markers(self, sql: str) -> str:
        """``%s`` markers as the target driver wants them (oracledb: ``:1``, ``:2``, ...)."""
        if self.target != "oracle":
            return sql
        counter = iter(range(1, 10_000))
        return _PARAM.sub(lambda _: f":{next(counter)}", sql)


class TranslatingCursor:
    """A DB-API cursor whose ``execute``/``executemany`` translate the statement first."""

    def __init__(self, cursor: Any, translate: Translator) -> None:
        self._cursor = cursor
        self._translate = translate

    def execute(self, sql: str, args: Any = None) -> Any:
        statement = self._translate(sql, args is not None)
        return self._cursor.execute(statement) if args is None else self._cursor.execute(statement, args)

    def executemany(self, sql: str, rows: Any) -> Any:
        return self._cursor.executemany(self._translate(sql, True), rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)

    def __iter__(self) -> Any:
        return iter(self._cursor)

    def __enter__(self) -> "TranslatingCursor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TranslatingConnection:
    """A DB-API connection handing out translating cursors; ``raw`` is the driver's connection.

    ``autocommit`` reads False: the drivers open transactions implicitly, so the workload never sends
    a dialect-specific ``BEGIN``.
    """

    autocommit = False

    def __init__(self, raw: Any, translate: Translator) -> None:
        self.raw = raw
        self.translate = translate

    def cursor(self) -> TranslatingCursor:
        return TranslatingCursor(self.raw.cursor(), self.translate)

    def commit(self) -> None:
        self.raw.commit()

    def rollback(self) -> None:
        self.raw.rollback()

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> "TranslatingConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def raw_connection(conn: Any) -> Any:
    """The driver connection behind a :class:`TranslatingConnection` (or ``conn`` itself)."""
    return conn.raw if isinstance(conn, TranslatingConnection) else conn


__all__ = ["TARGET_DIALECTS", "TranslatingConnection", "Translator", "WORKLOAD_FAMILY", "drop_table_sql",
           "raw_connection"]
