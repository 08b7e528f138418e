"""The source of a capture: a MariaDB/MySQL or PostgreSQL server reached by URL (password as for ``--target``:
``TDEBENCH_PASSWORD_SOURCE`` or ``?password_env=VAR``, never in the URL, never printed), or an SQLite file.

Every connection is read-only: SQLite opened with ``mode=ro``; MariaDB/MySQL read inside ``START TRANSACTION
READ ONLY``; PostgreSQL connections are set read-only, so psycopg opens every transaction with ``BEGIN READ ONLY``.
No setting of the server is ever changed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tdebench.capture.kinds import SQLITE, SourceKind, by_scheme
from tdebench.encryption import redact
from tdebench.engines.external.connect import connect
from tdebench.engines.external.target import Target, parse_target, resolve_password
from tdebench.errors import EnvironmentProblem, UsageError

LABEL = "source"  # TDEBENCH_PASSWORD_SOURCE


@dataclass
class Source:
    """An open, read-only source of one :class:`~tdebench.capture.kinds.SourceKind`."""

    kind: SourceKind
    raw: Any
    database: str
    description: str  # for messages and the manifest: no password
    user: str = ""

    def close(self) -> None:
        try:
            self.raw.close()
        except Exception:  # noqa: BLE001 - closing a read-only connection cannot lose anything
            pass

    @contextmanager
    def read_only(self) -> Iterator[Any]:
        """A cursor inside a read-only transaction (rolled back afterwards: nothing to keep)."""
        cur = self.raw.cursor()
        if self.kind.begin_read_only:  # PostgreSQL: the connection's own read_only (BEGIN READ ONLY)
            cur.execute(self.kind.begin_read_only)
        try:
            yield cur
        finally:
            try:
                self.raw.rollback()
            except Exception:  # noqa: BLE001
                pass

    def one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        with self.read_only() as cur:
            cur.execute(sql, args) if args else cur.execute(sql)
            return cur.fetchone()

    def all(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.read_only() as cur:
            cur.execute(sql, args) if args else cur.execute(sql)
            return list(cur.fetchall())


def _sqlite(text: str) -> Source:
    path = Path(text.removeprefix("sqlite:///") if text.startswith("sqlite:///") else text.removeprefix("sqlite:"))
    if not path.is_file():
        raise UsageError(f"--from {text}: no such SQLite file", "give the path of the database file, or a "
                         "mariadb://, mysql:// or postgresql:// URL")
    try:
        conn = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"--from {text}: not an SQLite database ({exc})",
                         "give the path of the database file (an encrypted one cannot be read)") from None
    return Source(SQLITE, conn, "main", f"sqlite {path}")


def target_of(text: str) -> Target:
    """The URL as a parsed target (UsageError for a bad one; the password never echoed)."""
    scheme = text.split(":", 1)[0].lower()
    if scheme in ("mssql", "sqlserver", "oracle"):
        raise UsageError(f"--from: capture reads MariaDB, MySQL, PostgreSQL or SQLite, not {scheme}",
                         "give a mariadb://, mysql:// or postgresql:// URL, or an SQLite file")
    return parse_target(f"{LABEL}={text}")


def open_source(text: str, timeout: int = 10) -> Source:
    """Connect to ``--from`` read-only: UsageError (exit 2) for a bad URL, EnvironmentProblem (exit 3) for a
    server that cannot be reached."""
    if "://" not in text or text.startswith("sqlite:"):
        return _sqlite(text)
    target = target_of(text)
    kind = by_scheme(target.kind.scheme)
    if kind is None:
        raise UsageError(f"--from: capture reads MariaDB, MySQL, PostgreSQL or SQLite, not {target.kind.product}",
                         "give a mariadb://, mysql:// or postgresql:// URL, or an SQLite file")
    password = resolve_password(target)
    try:
        raw = connect(target, password, timeout=timeout)
    except EnvironmentProblem as exc:
        raise EnvironmentProblem(redact(exc.problem).replace("target 'source'", "the source"), exc.fix) from None
    if kind.begin_read_only:
        raw.autocommit(False)
    else:
        raw.read_only = True  # psycopg opens every transaction with BEGIN READ ONLY
    return Source(kind, raw, target.database, f"{target.kind.product} {target.url}", target.user)
