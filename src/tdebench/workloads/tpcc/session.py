"""One virtual user's connection: dialect differences, transaction control, retryable errors.

Statements are written once with ``%s`` placeholders and ``{fu}`` where a row lock is taken
(``FOR UPDATE``); a ``qmark`` driver gets ``?``, a dialect without row locks (SQLite) no lock clause: its write
transaction starts with ``begin_sql`` (SQLite's ``BEGIN IMMEDIATE``: one writer at a time, the busy timeout
queues the others).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Connection

# error kinds a transaction is retried on, and what they are counted as
DEADLOCK = "deadlocks"
SERIALIZATION = "serialization_failures"
LOCK_TIMEOUT = "lock_timeouts"
BUSY = "busy"
RETRY_KINDS = (DEADLOCK, SERIALIZATION, LOCK_TIMEOUT, BUSY)
_PG_CODES = {"40P01": DEADLOCK, "40001": SERIALIZATION, "55P03": LOCK_TIMEOUT}
_MYSQL_CODES = {1213: DEADLOCK, 1020: SERIALIZATION, 1205: LOCK_TIMEOUT}


def retry_kind(exc: BaseException) -> str | None:
    """The retryable kind of a database error (deadlock, serialization, lock timeout, busy), else None."""
    code = getattr(exc, "sqlstate", None)
    if code in _PG_CODES:
        return _PG_CODES[code]
    args = getattr(exc, "args", ())
    if args and isinstance(args[0], int) and args[0] in _MYSQL_CODES:
        return _MYSQL_CODES[args[0]]
    text = str(exc).lower()
    if "database is locked" in text or "database table is locked" in text or "database is busy" in text:
        return BUSY
    return None


def holds_selected_rows(dialect: Dialect) -> bool:
    """A row a write transaction SELECTed stays as it was until the commit: its ``{fu}`` lock (row locks) or the
    single writer's lock ``begin_sql`` takes."""
    return dialect.row_locks or not dialect.concurrent_writes


def knows_deleted_rows(dialect: Dialect) -> bool:
    """Delivery can tell whether it deleted the new order it selected: by the driver's rowcount or the lock."""
    return dialect.rowcount or holds_selected_rows(dialect)


class Session:
    """A connection plus the dialect's way of running TPC-C statements."""

    def __init__(self, conn: Connection, dialect: Dialect, lock_wait: float = 50.0, procedures: bool = False) -> None:
        self.conn = conn
        self.dialect = dialect
        self.procedures = procedures
        self.cur = conn.cursor()
        self._sql: dict[str, str] = {}
        self._setup(lock_wait)
        if procedures and dialect.procedure_language == "plpgsql":
            conn.autocommit = True  # type: ignore[attr-defined]  # each function call is its own transaction

    def _setup(self, lock_wait: float) -> None:
        statement = self.dialect.lock_timeout(lock_wait)
        if statement:
            self.cur.execute(statement)
        self.conn.commit()

    def sql(self, text: str) -> str:
        """``text`` in this dialect (cached)."""
        out = self._sql.get(text)
        if out is None:
            out = text.replace("{fu}", " FOR UPDATE" if self.dialect.row_locks else "")
            if self.dialect.paramstyle == "qmark":
                out = out.replace("%s", "?")
            self._sql[text] = out
        return out

    def money(self, value: Decimal) -> Any:
        """A decimal parameter (a driver without decimals, SQLite's, takes floats)."""
        return value if self.dialect.typed_values else float(value)

    def begin(self, write: bool) -> None:
        """Start a transaction (explicit only where the driver does not start one itself)."""
        if self.dialect.autocommit:
            self.cur.execute(self.dialect.begin_sql if write else "BEGIN")

    def rows(self, text: str, params: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        self.cur.execute(self.sql(text), params)
        return list(self.cur.fetchall())

    def one(self, text: str, params: tuple[Any, ...] | list[Any] = ()) -> tuple[Any, ...] | None:
        self.cur.execute(self.sql(text), params)
        row = self.cur.fetchone()
        if row is not None:
            self.cur.fetchall()
        return row

    def run(self, text: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
        """Execute a statement without a result; returns the affected row count."""
        self.cur.execute(self.sql(text), params)
        return int(self.cur.rowcount)

    def delete_found(self, text: str, params: tuple[Any, ...] | list[Any]) -> bool:
        """Delete the one row this write transaction SELECTed; whether it was there to delete. The driver's
        rowcount says so where it counts (``Dialect.rowcount``); elsewhere the lock that holds the selected row
        (:func:`holds_selected_rows`) does: nothing else could delete it since."""
        count = self.run(text, params)
        return count == 1 if self.dialect.rowcount else holds_selected_rows(self.dialect)

    def commit(self) -> None:
        if self.dialect.autocommit:
            self.cur.execute("COMMIT")
        else:
            self.conn.commit()

    def rollback(self) -> None:
        if self.dialect.autocommit:
            if getattr(self.conn, "in_transaction", True):
                self.cur.execute("ROLLBACK")
        else:
            self.conn.rollback()

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001 - closing a broken connection
            pass
