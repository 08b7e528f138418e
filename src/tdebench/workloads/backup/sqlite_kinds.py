"""SQLite / SQLCipher: the online backup API and ``VACUUM INTO``, each plain and gzip-compressed.

The backup API copies pages into a second connection, which must use the source's key (SQLCipher refuses
to copy between databases with different keys). No public API opens another file with an instance's key, so
:func:`connect_path` uses the engine's private ``_key`` -- isolated here and proposed as a public
``SqliteInstance.connect_path(path)``. ``VACUUM INTO`` needs nothing: SQLCipher writes the copy with the same
key. Restores are in place: the backup file replaces the database file and is opened again.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import sqlcipher3

from tdebench.workloads.backup import tools
from tdebench.workloads.backup.kinds import BackupKind, Context, KindInfo, Stopwatch


def connect_path(instance: Any, path: Path) -> Any:
    """A connection to another database file, keyed like ``instance`` (plain when it is plain)."""
    conn = sqlcipher3.connect(str(path), isolation_level=None)
    key = getattr(instance, "_key", None)  # noqa: SLF001 - see the module docstring
    if key is not None:
        conn.execute(f"PRAGMA key = \"x'{key.hex()}'\"")
        conn.execute(f"PRAGMA cipher_page_size = {int(instance._settings['page_size'])}")  # noqa: SLF001
        conn.execute(f"PRAGMA cipher_use_hmac = {instance._settings['cipher_use_hmac'].upper()}")  # noqa: SLF001
    return conn


def _count(ctx: Context) -> dict[str, int]:
    conn = ctx.state.instance.connect()
    try:
        return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in ctx.tables}
    finally:
        conn.close()


class SqliteKind(BackupKind):
    """``api``: ``Connection.backup`` (sqlite3_backup_*); ``vacuum``: ``VACUUM INTO``."""

    def __init__(self, method: str, compressed: bool) -> None:
        self.method = method
        base = "sqlite_backup_api" if method == "api" else "vacuum_into"
        tool = "sqlite3_backup API" if method == "api" else "VACUUM INTO"
        how = "online page copy" if method == "api" else "compacted copy"
        self.info = KindInfo(base + ("_gz" if compressed else ""), "sqlite", tool,
                             f"physical, {how}" + (", gzip" if compressed else ""), False, compressed)

    def backup(self, ctx: Context) -> Path:
        inst = ctx.state.instance
        target = ctx.scratch / "backup.db"
        tools.discard(target)
        src = inst.connect()
        try:
            if self.method == "api":
                dest = connect_path(inst, target)
                try:
                    src.backup(dest)
                finally:
                    dest.close()
            else:
                src.execute("VACUUM INTO ?", (str(target),))
        finally:
            src.close()
        return tools.gzip_file(target) if self.info.compressed else target

    def scan_paths(self, ctx: Context, artifact: Path) -> list[Path]:
        return [tools.gunzip_to(artifact, ctx.scratch / "scan.db")] if self.info.compressed else [artifact]

    def restore(self, ctx: Context, artifact: Path) -> float:
        inst = ctx.state.instance
        clock = Stopwatch()
        aside = tools.set_aside(inst.path)
        try:
            with clock:
                if self.info.compressed:
                    tools.gunzip_to(artifact, inst.path)
                else:
                    shutil.copyfile(artifact, inst.path)
                conn = inst.connect()
                try:
                    conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                finally:
                    conn.close()
        except BaseException:
            tools.put_back(aside, inst.path)
            raise
        tools.discard(aside)
        return clock.seconds

    def restored_counts(self, ctx: Context) -> dict[str, int]:
        return _count(ctx)


def kinds() -> list[BackupKind]:
    return [SqliteKind("api", False), SqliteKind("api", True), SqliteKind("vacuum", False),
            SqliteKind("vacuum", True)]
