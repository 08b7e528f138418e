"""PostgreSQL: pg_basebackup (physical) and pg_dump (logical), each plain and gzip-compressed.

The tools reach the server through the instance's :class:`~tdebench.api.server.ServerAccess` (``tools()``: libpq
environment, the password in a temporary ``PGPASSFILE``). Physical restores stop only the server (``stop()``: a
gocryptfs mount stays mounted), so ``fs:*`` configs restore inside their encrypted file system; the files are
written by the server's OS user (``files()``, :mod:`tdebench.engines.toolkit.asuser`), the only user such a mount
admits.
"""

from __future__ import annotations

import pwd
from pathlib import Path
from typing import Any

from tdebench.engines.toolkit import asuser
from tdebench.workloads.backup import tools
from tdebench.workloads.backup.kinds import (RESTORE_DB, BackupKind, Context, DumpKind, KindInfo, Stopwatch,
                                            count_rows, execute_alone)


class _OnPostgres:
    """How the PostgreSQL kinds reach the tables: statements on the maintenance database, rows counted per
    database."""

    def execute(self, ctx: Context, statement: str) -> None:
        """One statement on the server's maintenance database (CREATE/DROP DATABASE)."""
        execute_alone(ctx.server.connect_to("postgres"), statement)

    def count(self, ctx: Context, database: str) -> dict[str, int]:
        return count_rows(ctx.server.connect_to(database), ctx.tables, ctx.state.instance.relation_name)


class PgBasebackupKind(_OnPostgres, BackupKind):
    """``pg_basebackup -X stream`` (plain directory, or tar + gzip) restored in place of the data directory."""

    def backup(self, ctx: Context) -> Path:
        target = ctx.scratch / self.info.name
        fmt = ["-Ft", "-z"] if self.info.compressed else ["-Fp"]
        with ctx.server.tools() as access:
            tools.run(access.argv("pg_basebackup", "-D", str(target), *fmt, "-X", "stream", "--checkpoint=fast"),
                      env=dict(access.env))
        return target

    def scan_paths(self, ctx: Context, artifact: Path) -> list[Path]:
        if not self.info.compressed:
            return [artifact]
        return [tools.gunzip_to(p, ctx.scratch / f"scan-{p.name[:-3]}") for p in sorted(artifact.glob("*.tar.gz"))]

    def _unpack(self, artifact: Path, pgdata: Path, user: pwd.struct_passwd | None) -> None:
        """Put the backup in place as the server's OS user (a gocryptfs mount admits only that user)."""
        if not self.info.compressed:
            asuser.copy_tree(user, artifact, pgdata)
            return
        asuser.make_dir(user, pgdata)
        asuser.extract_tar(user, artifact / "base.tar.gz", pgdata, gzip=True)
        wal = artifact / "pg_wal.tar.gz"
        if wal.is_file():
            if not asuser.exists(user, pgdata / "pg_wal"):
                asuser.make_dir(user, pgdata / "pg_wal")
            asuser.extract_tar(user, wal, pgdata / "pg_wal", gzip=True)

    def restore(self, ctx: Context, artifact: Path) -> float:
        files = ctx.server.files()
        pgdata, user = files.directory, files.user
        clock = Stopwatch()
        self.replace_data(ctx, pgdata, user, lambda: self._unpack(artifact, pgdata, user), clock)
        return clock.seconds

    def restored_counts(self, ctx: Context) -> dict[str, int]:
        return self.count(ctx, "tpch")


class PgDumpKind(_OnPostgres, DumpKind):
    """``pg_dump`` as plain SQL (``-Z 6``: gzip-compressed) restored with psql into a new database."""

    def backup(self, ctx: Context) -> Path:
        target = ctx.scratch / ("dump.sql.gz" if self.info.compressed else "dump.sql")
        level = ["-Z", str(tools.GZIP_LEVEL)] if self.info.compressed else []
        with ctx.server.tools() as access:
            tools.run(access.argv("pg_dump", "-d", "tpch", "-Fp", *level, "-f", str(target)), env=dict(access.env))
        return target

    def run_client(self, access: Any, artifact: Path) -> None:
        tools.run(access.argv("psql", "-d", RESTORE_DB, "-q", "-X", "-v", "ON_ERROR_STOP=1"),
                  stdin=artifact, gunzip_in=self.info.compressed, env=dict(access.env))


def kinds() -> list[BackupKind]:
    physical = KindInfo.variants("pg_basebackup", "postgres", "pg_basebackup", "physical, {}, WAL streamed",
                                 ("plain directory (-Fp)", "tar, gzip (-Ft -z)"), False)
    dumps = KindInfo.variants("pg_dump", "postgres", "pg_dump", "logical, {}",
                              ("SQL text (-Fp)", "SQL text, gzip (-Fp -Z 6)"), True)
    return [*map(PgBasebackupKind, physical), *map(PgDumpKind, dumps)]
