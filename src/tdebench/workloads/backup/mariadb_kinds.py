"""MariaDB: mariadb-backup (physical, hot) and mariadb-dump (logical), each plain and gzip-compressed.

The tools reach the server through the instance's :class:`~tdebench.api.server.ServerAccess` (``tools()``: the
password in an inherited in-memory file); physical restores replace its ``files()``. With TDE, ``mariadb-backup
--backup`` and ``--prepare`` load the ``file_key_management`` plugin themselves and need the file key that the
engine writes only while the server starts: its ``key_material()`` makes it available for the duration of the tool
and removes it after.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tdebench.workloads.backup import tools
from tdebench.workloads.backup.kinds import (RESTORE_DB, BackupKind, Context, DumpKind, KindInfo, Stopwatch,
                                            count_rows, execute_alone)


class _OnMariadb:
    """How the MariaDB kinds reach the tables: statements on a connection of their own, rows counted per schema."""

    def execute(self, ctx: Context, statement: str) -> None:
        execute_alone(ctx.state.instance.connect(), statement)

    def count(self, ctx: Context, database: str | None) -> dict[str, int]:
        """Rows per table of ``database`` (None: the benchmark database)."""
        prefix = database + "." if database else ""
        return count_rows(ctx.state.instance.connect(), ctx.tables, lambda table: f"{prefix}`{table}`")


class MariadbBackupKind(_OnMariadb, BackupKind):
    """``mariadb-backup --backup`` (hot physical copy of the data files) and an in-place restore."""

    def backup(self, ctx: Context) -> Path:
        server = ctx.server
        work = ctx.scratch / "mb-work"
        target = ctx.scratch / ("mariadb_backup.xb.gz" if self.info.compressed else "mariadb_backup")
        with server.tools() as access, server.key_material():
            if access.runs_as is not None:  # the tool writes its target as the server's user
                tools.give_to(ctx.scratch, access.runs_as)
            if self.info.compressed:
                tools.run(access.argv("mariadb-backup", "--backup", "--stream=mbstream", f"--target-dir={work}"),
                          stdout=target, gzip_out=True, pass_fds=access.pass_fds, user=access.runs_as)
            else:
                tools.run(access.argv("mariadb-backup", "--backup", f"--target-dir={target}"),
                          pass_fds=access.pass_fds, user=access.runs_as)
        tools.discard(work)
        return target

    def scan_paths(self, ctx: Context, artifact: Path) -> list[Path]:
        if not self.info.compressed:
            return [artifact]
        return [tools.gunzip_to(artifact, ctx.scratch / "scan.xb")]

    def restore(self, ctx: Context, artifact: Path) -> float:
        server = ctx.server
        files = server.files()
        clock = Stopwatch()
        prepared = ctx.scratch / "mb-restore"
        tools.discard(prepared)
        with server.tools() as access:
            tool, runs_as = access.tool, access.runs_as
        with clock:
            if self.info.compressed:
                prepared.mkdir()
                tools.run([tool("mbstream"), "-x", "-C", str(prepared)], stdin=artifact, gunzip_in=True)
            else:
                shutil.copytree(artifact, prepared, symlinks=True)
            with server.key_material():
                tools.run([tool("mariadb-backup"), "--prepare", f"--target-dir={prepared}"])
        if runs_as is not None:  # copied back by the only user the mount admits
            tools.give_to(prepared, runs_as)

        def copy_back() -> None:
            tools.run([tool("mariadb-backup"), "--copy-back", f"--target-dir={prepared}",
                       f"--datadir={files.directory}"], user=runs_as)
            if runs_as is None:
                tools.give_to(files.directory, files.user)

        self.replace_data(ctx, files.directory, runs_as, copy_back, clock)
        tools.discard(prepared)
        return clock.seconds

    def restored_counts(self, ctx: Context) -> dict[str, int]:
        return self.count(ctx, None)


class MariadbDumpKind(_OnMariadb, DumpKind):
    """``mariadb-dump --single-transaction`` (SQL text) restored with the ``mariadb`` client into a new database."""

    def backup(self, ctx: Context) -> Path:
        target = ctx.scratch / ("dump.sql.gz" if self.info.compressed else "dump.sql")
        with ctx.server.tools() as access:
            tools.run(access.argv("mariadb-dump", "--single-transaction", "--quick", "--skip-lock-tables",
                                  "--hex-blob", "tpch"),
                      stdout=target, gzip_out=self.info.compressed, pass_fds=access.pass_fds)
        return target

    def run_client(self, access: Any, artifact: Path) -> None:
        tools.run(access.argv("mariadb", RESTORE_DB), stdin=artifact, gunzip_in=self.info.compressed,
                  pass_fds=access.pass_fds)


def kinds() -> list[BackupKind]:
    physical = KindInfo.variants("mariadb_backup", "mariadb", "mariadb-backup", "physical, hot, {}",
                                 ("directory", "--stream=mbstream | gzip"), False)
    dumps = KindInfo.variants("mariadb_dump", "mariadb", "mariadb-dump", "logical, {}", ("SQL text", "SQL | gzip"),
                              True)
    return [*map(MariadbBackupKind, physical), *map(MariadbDumpKind, dumps)]
