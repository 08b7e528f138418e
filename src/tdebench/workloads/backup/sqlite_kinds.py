"""SQLite / SQLCipher: the online backup API and ``VACUUM INTO``, each plain and gzip-compressed.

The backup API copies pages into a second connection, which must use the source's key (SQLCipher refuses to copy
between databases with different keys): the instance's :class:`~tdebench.api.server.DatabaseFile`
(:meth:`Instance.database_file <tdebench.api.engine.Instance.database_file>`) opens the target file with the
instance's key and settings. ``VACUUM INTO`` needs nothing: SQLCipher writes the copy
with the same key. Restores are in place: the backup file replaces the database file and is opened again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tdebench.workloads.backup import tools
from tdebench.workloads.backup.kinds import BackupKind, Context, KindInfo, Stopwatch


def _count(ctx: Context) -> dict[str, int]:
    conn = ctx.state.instance.connect()
    try:
        return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in ctx.tables}
    finally:
        conn.close()


class SqliteKind(BackupKind):
    """``api``: ``Connection.backup`` (sqlite3_backup_*); ``vacuum``: ``VACUUM INTO``."""

    def __init__(self, method: str, info: KindInfo) -> None:
        super().__init__(info)
        self.method = method

    def backup(self, ctx: Context) -> Path:
        inst = ctx.state.instance
        target = ctx.scratch / "backup.db"
        tools.discard(target)
        src = inst.connect()
        try:
            if self.method == "api":
                dest = ctx.database_file.connect(target)
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
        path = ctx.database_file.path
        clock = Stopwatch()
        aside = tools.set_aside(path)
        try:
            with clock:
                if self.info.compressed:
                    tools.gunzip_to(artifact, path)
                else:
                    shutil.copyfile(artifact, path)
                conn = inst.connect()
                try:
                    conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                finally:
                    conn.close()
        except BaseException:
            tools.put_back(aside, path)
            raise
        tools.discard(aside)
        return clock.seconds

    def restored_counts(self, ctx: Context) -> dict[str, int]:
        return _count(ctx)


def kinds() -> list[BackupKind]:
    api = KindInfo.variants("sqlite_backup_api", "sqlite", "sqlite3_backup API", "physical, online page copy{}",
                            ("", ", gzip"), False)
    vacuum = KindInfo.variants("vacuum_into", "sqlite", "VACUUM INTO", "physical, compacted copy{}", ("", ", gzip"),
                               False)
    return [SqliteKind("api", info) for info in api] + [SqliteKind("vacuum", info) for info in vacuum]
