"""What a backup kind is, and the context it works in.

A kind makes a backup (a file or a directory under ``scratch``), says which paths hold its bytes for the
at-rest scan (decompressing first when needed), and restores it: physical kinds **in place** (server stopped,
the live data set aside, the backup put where the data was, server started, the aside copy deleted once the
row counts match; put back if anything fails), logical kinds into a fresh database on the same server,
dropped afterwards. Each returns the seconds of the work itself (never the stop of the running server).
"""

from __future__ import annotations

import pwd
import time
from contextlib import closing
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tdebench.api.server import DatabaseFile, ServerAccess
from tdebench.api.trial import ConfigState
from tdebench.errors import EnvironmentProblem, RunFailed
from tdebench.engines.toolkit import asuser
from tdebench.workloads import rows
from tdebench.workloads.backup import tools

RESTORE_DB = "tpch_restore"


def count_rows(conn: Any, tables: Iterable[str], relation: Callable[[str], str]) -> dict[str, int]:
    """The rows of each of ``tables`` (``relation``: its name in the statement), read on ``conn``, which is then
    committed and closed."""
    with closing(conn):
        return rows.count_rows(conn, tables, relation)


def execute_alone(conn: Any, statement: str) -> None:
    """``statement`` on ``conn`` (a connection of its own, e.g. for CREATE/DROP DATABASE), committed and closed."""
    try:
        conn.cursor().execute(statement)
        conn.commit()
    finally:
        conn.close()


@dataclass(frozen=True)
class KindInfo:
    """Facts about a backup kind, shown in the report."""

    name: str
    engine: str
    tool: str
    description: str
    logical: bool
    compressed: bool

    @classmethod
    def variants(cls, base: str, engine: str, tool: str, description: str, hows: tuple[str, str],
                 logical: bool) -> tuple[KindInfo, KindInfo]:
        """The plain and the gzip-compressed variant of a kind: ``base`` and ``base_gz``, ``description`` with
        ``{}`` filled by ``hows`` (plain, compressed)."""
        return (cls(base, engine, tool, description.format(hows[0]), logical, False),
                cls(base + "_gz", engine, tool, description.format(hows[1]), logical, True))

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "tool": self.tool, "description": self.description,
                "logical": self.logical, "compressed": self.compressed}


@dataclass
class Context:
    """One config's instance, its tables and the row counts a restore must reproduce."""

    state: ConfigState
    tables: list[str]
    counts: dict[str, int]
    scratch: Path
    notes: list[str] = field(default_factory=list)

    @property
    def server(self) -> ServerAccess:
        """How the engine's own tools reach the instance's server (the kinds of those tools run on engines that
        name them in ``Dialect.backup_tools``, whose instances return one)."""
        access = self.state.instance.server_access()
        if access is None:
            raise RunFailed(f"{self.state.config.label}: its engine names backup tools but gives them no access to "
                            "its server", "return a ServerAccess from the instance's server_access()")
        return access

    @property
    def database_file(self) -> DatabaseFile:
        """The embedded database's file (the kinds of a SQLite library run on engines whose instances have one)."""
        found = self.state.instance.database_file()
        if found is None:
            raise RunFailed(f"{self.state.config.label}: its engine names SQLite backups but has no database file",
                            "return a DatabaseFile from the instance's database_file()")
        return found


class Stopwatch:
    """Sums the seconds of the timed parts of a restore."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._t0: float | None = None

    def __enter__(self) -> "Stopwatch":
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._t0 is not None:
            self.seconds += time.perf_counter() - self._t0
        self._t0 = None


class BackupKind(ABC):
    """One way to back up and restore one engine's database."""

    def __init__(self, info: KindInfo) -> None:
        self.info = info

    @abstractmethod
    def backup(self, ctx: Context) -> Path:
        """Make the backup under ``ctx.scratch``; returns its file or directory."""

    def scan_paths(self, ctx: Context, artifact: Path) -> list[Path]:
        """Files or directories whose bytes are the backup's content (decompressed copies for compressed kinds)."""
        return [artifact]

    @abstractmethod
    def restore(self, ctx: Context, artifact: Path) -> float:
        """Restore and leave the server running on the result; returns seconds of restore work."""

    @abstractmethod
    def restored_counts(self, ctx: Context) -> dict[str, int]:
        """Row counts of the restored tables (logical kinds: in the fresh database)."""

    def cleanup(self, ctx: Context) -> None:
        """Drop what the restore created beside the live data (logical kinds: the fresh database)."""

    def replace_data(self, ctx: Context, directory: Path, user: pwd.struct_passwd | None, put: Callable[[], None],
                     clock: Stopwatch) -> None:
        """A physical restore in place: the server stopped, its data ``directory`` set aside (as ``user``: inside a
        mount that admits only that user), ``put`` writing the backup where it was and the server started (timed on
        ``clock``), then the rows checked; the aside copy is deleted, or put back if anything failed."""
        server = ctx.server
        server.stop()
        aside = tools.set_aside(directory, user)
        try:
            with clock:
                put()
                server.start()
            if self.restored_counts(ctx) != ctx.counts:
                raise EnvironmentProblem(f"the data directory restored from {self.info.tool} does not hold the "
                                         "loaded rows", "look at the server log of the instance")
        except BaseException:
            server.stop()
            tools.put_back(aside, directory, user)
            server.start()
            raise
        asuser.remove_tree(user, aside)


class DumpKind(BackupKind):
    """A logical dump (SQL text, gzip-compressed or not) restored by the server's client into a fresh database,
    :data:`RESTORE_DB`, which the cleanup drops again."""

    @abstractmethod
    def execute(self, ctx: Context, statement: str) -> None:
        """One statement on a connection of its own (CREATE/DROP DATABASE)."""

    @abstractmethod
    def count(self, ctx: Context, database: str) -> dict[str, int]:
        """Row counts of the tables in ``database``."""

    @abstractmethod
    def run_client(self, access: Any, artifact: Path) -> None:
        """The client that reads the dump into :data:`RESTORE_DB` (``access``: the instance's tool access)."""

    def scan_paths(self, ctx: Context, artifact: Path) -> list[Path]:
        return [tools.gunzip_to(artifact, ctx.scratch / "scan.sql")] if self.info.compressed else [artifact]

    def restore(self, ctx: Context, artifact: Path) -> float:
        self.cleanup(ctx)
        self.execute(ctx, f"CREATE DATABASE {RESTORE_DB}")
        clock = Stopwatch()
        with ctx.server.tools() as access, clock:
            self.run_client(access, artifact)
        return clock.seconds

    def restored_counts(self, ctx: Context) -> dict[str, int]:
        return self.count(ctx, RESTORE_DB)

    def cleanup(self, ctx: Context) -> None:
        self.execute(ctx, f"DROP DATABASE IF EXISTS {RESTORE_DB}")
