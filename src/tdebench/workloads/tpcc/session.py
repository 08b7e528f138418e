"""One virtual user's connection: dialect differences, transaction control, retryable errors.

Statements are written once with ``%s`` placeholders and ``{fu}`` where a row lock is taken
(``FOR UPDATE``); SQLite gets ``?`` and no lock clause (a write transaction starts with
``BEGIN IMMEDIATE``: SQLite has one writer at a time and the busy timeout queues the others).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tdebench.engines.base import Connection

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


class Session:
    """A connection plus the dialect's way of running TPC-C statements."""

    def __init__(self, conn: Connection, dialect: str, lock_wait: float = 50.0, procedures: bool = False) -> None:
        self.conn = conn
        self.dialect = dialect
        self.procedures = procedures
        self.cur = conn.cursor()
        self._sql: dict[str, str] = {}
        self._setup(lock_wait)
        if procedures and dialect == "postgres":
            conn.autocommit = True  # type: ignore[attr-defined]  # each function call is its own transaction

    def _setup(self, lock_wait: float) -> None:
        if self.dialect == "mariadb":
            self.cur.execute(f"SET SESSION innodb_lock_wait_timeout = {max(1, round(lock_wait))}")
        elif self.dialect == "postgres":
            self.cur.execute(f"SET lock_timeout = '{int(lock_wait * 1000)}ms'")
        elif self.dialect == "sqlite":
            self.cur.execute(f"PRAGMA busy_timeout = {int(lock_wait * 1000)}")
        self.conn.commit()

    def sql(self, text: str) -> str:
        """``text`` in this dialect (cached)."""
        out = self._sql.get(text)
        if out is None:
            lock = "" if self.dialect == "sqlite" else " FOR UPDATE"
            out = text.replace("{fu}", lock)
            if self.dialect == "sqlite":
                out = out.replace("%s", "?")
            self._sql[text] = out
        return out

    def money(self, value: Decimal) -> Any:
        """A decimal parameter (SQLite's driver takes floats only)."""
        return float(value) if self.dialect == "sqlite" else value

    def begin(self, write: bool) -> None:
        """Start a transaction (explicit only where the driver does not start one itself)."""
        if self.dialect == "sqlite":
            self.cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")

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

    def commit(self) -> None:
        if self.dialect == "sqlite":
            self.cur.execute("COMMIT")
        else:
            self.conn.commit()

    def rollback(self) -> None:
        if self.dialect == "sqlite":
            if getattr(self.conn, "in_transaction", True):
                self.cur.execute("ROLLBACK")
        else:
            self.conn.rollback()

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001 - closing a broken connection
            pass
