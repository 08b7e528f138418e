"""MariaDB: mariadb-backup (physical, hot) and mariadb-dump (logical), each plain and gzip-compressed.

Connection options come from the public ``MariadbInstance.client_argv()`` (password through an inherited
pipe). With TDE, ``mariadb-backup --backup`` and ``--prepare`` load the ``file_key_management`` plugin
themselves and need the file key that the engine writes only while the server starts: ``key_material()``
(see :class:`tdebench.api.engine.Instance`) makes it available for the duration of the tool and removes it
after.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tdebench.engines.toolkit.process import find_binary
from tdebench.errors import EnvironmentProblem
from tdebench.workloads.backup import tools
from tdebench.workloads.backup.kinds import RESTORE_DB, BackupKind, Context, KindInfo, Stopwatch

PACKAGE = "mariadb-backup"
BIN_DIRS = (Path("/usr/bin"), Path("/usr/local/mysql/bin"))


def binary(name: str) -> str:
    names = {"mariadb-backup": ("mariadb-backup", "mariabackup"), "mariadb-dump": ("mariadb-dump", "mysqldump"),
             "mbstream": ("mbstream",), "mariadb": ("mariadb", "mysql")}[name]
    package = PACKAGE if name in ("mariadb-backup", "mbstream") else "mariadb-client"
    return str(find_binary(names, BIN_DIRS, package))


@contextmanager
def client(instance: Any, tool: str, database: str | None = None) -> Iterator[tuple[list[str], int]]:
    """(argv prefix for ``tool`` with credentials and target, fd to pass) built from ``client_argv()``."""
    argv, fd = instance.client_argv()
    try:
        target = [a for a in argv if a.startswith(("--socket=", "--host=", "--port="))]
        prefix = [binary(tool), argv[1], *target]
        yield prefix + ([database] if database else []), fd
    finally:
        import os

        os.close(fd)


def _count(ctx: Context, schema: str | None) -> dict[str, int]:
    conn = ctx.state.instance.connect()
    try:
        cur = conn.cursor()
        out = {}
        for table in ctx.tables:
            cur.execute(f"SELECT COUNT(*) FROM {schema + '.' if schema else ''}`{table}`")
            out[table] = int(cur.fetchone()[0])
        conn.commit()
        return out
    finally:
        conn.close()


class MariadbBackupKind(BackupKind):
    """``mariadb-backup --backup`` (hot physical copy of the data files) and an in-place restore."""

    def __init__(self, compressed: bool) -> None:
        name = "mariadb_backup" + ("_gz" if compressed else "")
        how = "--stream=mbstream | gzip" if compressed else "directory"
        self.info = KindInfo(name, "mariadb", "mariadb-backup", f"physical, hot, {how}", False, compressed)

    def backup(self, ctx: Context) -> Path:
        inst = ctx.state.instance
        work = ctx.scratch / "mb-work"
        target = ctx.scratch / ("mariadb_backup.xb.gz" if self.info.compressed else "mariadb_backup")
        with client(inst, "mariadb-backup") as (argv, fd), inst.key_material():
            if self.info.compressed:
                tools.run([*argv, "--backup", "--stream=mbstream", f"--target-dir={work}"], stdout=target,
                          gzip_out=True, pass_fds=[fd])
            else:
                tools.run([*argv, "--backup", f"--target-dir={target}"], pass_fds=[fd])
        tools.discard(work)
        return target

    def scan_paths(self, ctx: Context, artifact: Path) -> list[Path]:
        if not self.info.compressed:
            return [artifact]
        return [tools.gunzip_to(artifact, ctx.scratch / "scan.xb")]

    def restore(self, ctx: Context, artifact: Path) -> float:
        inst = ctx.state.instance
        clock = Stopwatch()
        prepared = ctx.scratch / "mb-restore"
        tools.discard(prepared)
        with clock:
            if self.info.compressed:
                prepared.mkdir()
                tools.run([binary("mbstream"), "-x", "-C", str(prepared)], stdin=artifact, gunzip_in=True)
            else:
                shutil.copytree(artifact, prepared, symlinks=True)
            with inst.key_material():
                tools.run([binary("mariadb-backup"), "--prepare", f"--target-dir={prepared}"])
        inst.stop()
        aside = tools.set_aside(inst.datadir)
        try:
            with clock:
                tools.run([binary("mariadb-backup"), "--copy-back", f"--target-dir={prepared}",
                           f"--datadir={inst.datadir}"])
                tools.give_to(inst.datadir, inst.user)
                inst.start()
            if _count(ctx, None) != ctx.counts:
                raise EnvironmentProblem("the restored MariaDB data directory does not hold the loaded rows",
                                         "look at the server log of the instance")
        except BaseException:
            inst.stop()
            tools.put_back(aside, inst.datadir)
            inst.start()
            raise
        tools.discard(aside)
        tools.discard(prepared)
        return clock.seconds

    def restored_counts(self, ctx: Context) -> dict[str, int]:
        return _count(ctx, None)


class MariadbDumpKind(BackupKind):
    """``mariadb-dump --single-transaction`` (SQL text) restored with the ``mariadb`` client into a new database."""

    def __init__(self, compressed: bool) -> None:
        name = "mariadb_dump" + ("_gz" if compressed else "")
        how = "SQL | gzip" if compressed else "SQL text"
        self.info = KindInfo(name, "mariadb", "mariadb-dump", f"logical, {how}", True, compressed)

    def backup(self, ctx: Context) -> Path:
        target = ctx.scratch / ("dump.sql.gz" if self.info.compressed else "dump.sql")
        with client(ctx.state.instance, "mariadb-dump") as (argv, fd):
            tools.run([*argv, "--single-transaction", "--quick", "--skip-lock-tables", "--hex-blob", "tpch"],
                      stdout=target, gzip_out=self.info.compressed, pass_fds=[fd])
        return target

    def scan_paths(self, ctx: Context, artifact: Path) -> list[Path]:
        return [tools.gunzip_to(artifact, ctx.scratch / "scan.sql")] if self.info.compressed else [artifact]

    def restore(self, ctx: Context, artifact: Path) -> float:
        self.cleanup(ctx)
        conn = ctx.state.instance.connect()
        try:
            conn.cursor().execute(f"CREATE DATABASE {RESTORE_DB}")
            conn.commit()
        finally:
            conn.close()
        clock = Stopwatch()
        with client(ctx.state.instance, "mariadb", RESTORE_DB) as (argv, fd), clock:
            tools.run(argv, stdin=artifact, gunzip_in=self.info.compressed, pass_fds=[fd])
        return clock.seconds

    def restored_counts(self, ctx: Context) -> dict[str, int]:
        return _count(ctx, RESTORE_DB)

    def cleanup(self, ctx: Context) -> None:
        conn = ctx.state.instance.connect()
        try:
            conn.cursor().execute(f"DROP DATABASE IF EXISTS {RESTORE_DB}")
            conn.commit()
        finally:
            conn.close()


def kinds() -> list[BackupKind]:
    return [MariadbBackupKind(False), MariadbBackupKind(True), MariadbDumpKind(False), MariadbDumpKind(True)]
