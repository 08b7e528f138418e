"""A DB-API-like face for an ``apsw`` connection (what :class:`tdebench.api.engine.Connection` asks for).

apsw is not a DB-API driver: it runs in autocommit (as tdebench's SQLite dialect expects: workloads open write
transactions with ``BEGIN IMMEDIATE`` themselves), has no ``commit``/``rollback`` methods, and its cursors fetch by
iterating. This wrapper gives ``cursor()`` with ``execute``/``executemany``/``fetch*``/``description``/``rowcount``,
``commit``/``rollback`` (no-ops outside a transaction, as sqlite3's are), ``in_transaction``, ``interrupt`` and
``execute`` on the connection, and reports its page-cache counts to :mod:`tdebench.engines.sqlite3mc.counters`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import apsw


class McCursor:
    """A cursor over one apsw cursor."""

    arraysize = 1

    def __init__(self, owner: "McConnection") -> None:
        self.connection = owner
        self._cur = owner.raw.cursor()
        self._rows: Iterator[tuple[Any, ...]] = iter(())
        self.description: Any = None
        self.rowcount = -1

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> "McCursor":
        self.connection.publish()
        before = self.connection.raw.total_changes()
        self._rows = self._cur.execute(sql, parameters)
        try:
            self.description = self._cur.description
        except apsw.ExecutionCompleteError:  # no rows to describe (DDL, DML)
            self.description = None
        self.rowcount = self.connection.raw.total_changes() - before if self.description is None else -1
        return self

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> "McCursor":
        self.connection.publish()
        before = self.connection.raw.total_changes()
        rows = list(rows)
        if rows:
            for _ in self._cur.executemany(sql, rows):
                pass
        self.description = None
        self.rowcount = self.connection.raw.total_changes() - before
        self._rows = iter(())
        return self

    def fetchone(self) -> tuple[Any, ...] | None:
        return next(self._rows, None)

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        out = []
        for _ in range(size or self.arraysize):
            row = next(self._rows, None)
            if row is None:
                break
            out.append(row)
        return out

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return self._rows

    def close(self) -> None:
        self._rows = iter(())
        self._cur.close(True)


class McConnection:
    """One apsw connection with DB-API cursors; ``on_publish``/``on_close`` report its page-cache counts."""

    def __init__(self, raw: apsw.Connection, on_publish: Callable[["McConnection"], None] | None = None,
                 on_close: Callable[["McConnection"], None] | None = None) -> None:
        self.raw = raw
        self._on_publish = on_publish
        self._on_close = on_close

    @property
    def in_transaction(self) -> bool:
        return bool(self.raw.in_transaction)

    def publish(self) -> None:
        if self._on_publish is not None:
            self._on_publish(self)

    def cursor(self) -> McCursor:
        return McCursor(self)

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> McCursor:
        return self.cursor().execute(sql, parameters)

    def commit(self) -> None:
        if self.raw.in_transaction:
            self.raw.execute("COMMIT")

    def rollback(self) -> None:
        if self.raw.in_transaction:
            self.raw.execute("ROLLBACK")

    def interrupt(self) -> None:
        self.raw.interrupt()

    def close(self) -> None:
        on_close, self._on_close, self._on_publish = self._on_close, None, None
        try:
            if on_close is not None:
                on_close(self)
        finally:
            self.raw.close(True)

    def __del__(self) -> None:  # garbage-collected without close(): count it all the same
        try:
            if self._on_close is not None:
                self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass
