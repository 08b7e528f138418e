"""A DB-API-like face for a DuckDB connection (what :class:`tdebench.api.engine.Connection` asks for).

``DuckDBPyConnection.cursor()`` opens a *new connection* with a transaction of its own, so workloads that open a
transaction on one cursor and write through another would write outside it. Here every cursor of a
:class:`DuckdbConnection` runs on the one DuckDB connection it wraps, as sqlite3's and psycopg's cursors do, and
the connection tracks ``in_transaction`` as sqlite3's does (the dialect is autocommit: workloads open write
transactions with ``BEGIN TRANSACTION`` themselves).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import duckdb

_OPENS = re.compile(r"^\s*(BEGIN|START\s+TRANSACTION)\b", re.IGNORECASE)
_CLOSES = re.compile(r"^\s*(COMMIT|END|ROLLBACK|ABORT)\b", re.IGNORECASE)


class DuckdbCursor:
    """A cursor on its connection's single DuckDB connection (one open result at a time, as in DuckDB)."""

    arraysize = 1

    def __init__(self, owner: "DuckdbConnection") -> None:
        self.connection = owner
        self._con = owner.raw
        self.rowcount = -1
        self.description: Any = None

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> "DuckdbCursor":
        self.connection.note(sql)
        self._con.execute(sql, parameters) if parameters is not None else self._con.execute(sql)
        self.description = self._con.description
        self.rowcount = -1
        return self

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> "DuckdbCursor":
        rows = list(rows)
        if rows:
            self._con.executemany(sql, rows)
        self.description = None
        self.rowcount = len(rows)  # every statement of the refresh functions changes one row per parameter set
        return self

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._con.fetchone()

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        return self._con.fetchmany(size or self.arraysize)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._con.fetchall()

    def close(self) -> None:
        self.description = None

    def __iter__(self):
        return iter(self.fetchall())


class DuckdbConnection:
    """One DuckDB connection to the benchmark database, with DB-API cursors and ``in_transaction``."""

    def __init__(self, raw: "duckdb.DuckDBPyConnection", on_close: Callable[["DuckdbConnection"], None]) -> None:
        self.raw = raw
        self.in_transaction = False
        self._on_close = on_close

    def note(self, sql: str) -> None:
        """Follow the transaction a statement opens or ends."""
        if _OPENS.match(sql):
            self.in_transaction = True
        elif _CLOSES.match(sql):
            self.in_transaction = False

    def cursor(self) -> DuckdbCursor:
        return DuckdbCursor(self)

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> DuckdbCursor:
        return self.cursor().execute(sql, parameters)

    def commit(self) -> None:
        self.raw.commit()  # a no-op outside a transaction
        self.in_transaction = False

    def rollback(self) -> None:
        try:
            self.raw.rollback()
        except duckdb.TransactionException:  # none open: DB-API's rollback is then a no-op
            pass
        self.in_transaction = False

    def interrupt(self) -> None:
        """Cancel the running statement (query timeouts; called from another thread)."""
        self.raw.interrupt()

    def close(self) -> None:
        try:
            self.raw.close()
        finally:
            self._on_close(self)
