"""PostgreSQL: pg_basebackup (physical) and pg_dump (logical), each plain and gzip-compressed.

Uses the instance's public ``cluster`` (socket directory, port, role, password, ``pgdata``, ``stop``/``start``)
and ``bindir``. The password reaches the tools through ``PGPASSFILE``: a 0600 file in a fresh 0700 directory,
removed as soon as the tool has finished. Physical restores stop only the server (a gocryptfs mount stays
mounted), so ``fs:*`` configs restore inside their encrypted file system; the files are written by the
server's OS user (:mod:`tdebench.engines.toolkit.asuser`), the only user such a mount admits.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tdebench.engines.toolkit import asuser
from tdebench.engines.toolkit.fsencrypt import temp_secret_file
from tdebench.engines.postgres.server import ROLE
from tdebench.errors import EnvironmentProblem
from tdebench.workloads.backup import tools
from tdebench.workloads.backup.kinds import RESTORE_DB, BackupKind, Context, KindInfo, Stopwatch


@contextmanager
def pg_env(instance: Any) -> Iterator[dict[str, str]]:
    """Environment for libpq tools: socket, port, role and a temporary PGPASSFILE."""
    cluster = instance.cluster
    host = "127.0.0.1" if cluster.tcp else str(cluster.socket_dir)
    with temp_secret_file(f"*:*:*:{ROLE}:{cluster.password}\n") as passfile:
        yield {"PGHOST": host, "PGPORT": str(cluster.port), "PGUSER": ROLE, "PGPASSFILE": str(passfile),
               "PGAPPNAME": "tdebench-backup"}


def tool(instance: Any, name: str) -> str:
    return str(Path(instance.bindir) / name)


def _count(ctx: Context, database: str) -> dict[str, int]:
    inst = ctx.state.instance
    with inst.cluster.connect(database, autocommit=True) as conn:
        return {t: int(conn.execute(f"SELECT COUNT(*) FROM {inst.relation_name(t)}").fetchone()[0])
                for t in ctx.tables}


class PgBasebackupKind(BackupKind):
    """``pg_basebackup -X stream`` (plain directory, or tar + gzip) restored in place of the data directory."""

    def __init__(self, compressed: bool) -> None:
        name = "pg_basebackup" + ("_gz" if compressed else "")
        how = "tar, gzip (-Ft -z)" if compressed else "plain directory (-Fp)"
        self.info = KindInfo(name, "postgres", "pg_basebackup", f"physical, {how}, WAL streamed", False, compressed)

    def backup(self, ctx: Context) -> Path:
        inst = ctx.state.instance
        target = ctx.scratch / self.info.name
        fmt = ["-Ft", "-z"] if self.info.compressed else ["-Fp"]
        with pg_env(inst) as env:
            tools.run([tool(inst, "pg_basebackup"), "-D", str(target), *fmt, "-X", "stream", "--checkpoint=fast"],
                      env=env)
        return target

    def scan_paths(self, ctx: Context, artifact: Path) -> list[Path]:
        if not self.info.compressed:
            return [artifact]
        return [tools.gunzip_to(p, ctx.scratch / f"scan-{p.name[:-3]}") for p in sorted(artifact.glob("*.tar.gz"))]

    def _unpack(self, artifact: Path, pgdata: Path, user: Any) -> None:
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
        inst = ctx.state.instance
        cluster = inst.cluster
        user = cluster.user
        clock = Stopwatch()
        cluster.stop()
        aside = cluster.pgdata.with_name(cluster.pgdata.name + ".before-restore")
        asuser.remove_tree(user, aside)
        asuser.rename(user, cluster.pgdata, aside)
        try:
            with clock:
                self._unpack(artifact, cluster.pgdata, user)
                cluster.start()
            if _count(ctx, "tpch") != ctx.counts:
                raise EnvironmentProblem("the restored PostgreSQL data directory does not hold the loaded rows",
                                         "look at the server log of the instance")
        except BaseException:
            cluster.stop()
            asuser.remove_tree(user, cluster.pgdata)
            asuser.rename(user, aside, cluster.pgdata)
            cluster.start()
            raise
        asuser.remove_tree(user, aside)
        return clock.seconds

    def restored_counts(self, ctx: Context) -> dict[str, int]:
        return _count(ctx, "tpch")


class PgDumpKind(BackupKind):
    """``pg_dump`` as plain SQL (``-Z 6``: gzip-compressed) restored with psql into a new database."""

    def __init__(self, compressed: bool) -> None:
        name = "pg_dump" + ("_gz" if compressed else "")
        how = "SQL text, gzip (-Fp -Z 6)" if compressed else "SQL text (-Fp)"
        self.info = KindInfo(name, "postgres", "pg_dump", f"logical, {how}", True, compressed)

    def backup(self, ctx: Context) -> Path:
        inst = ctx.state.instance
        target = ctx.scratch / ("dump.sql.gz" if self.info.compressed else "dump.sql")
        level = ["-Z", str(tools.GZIP_LEVEL)] if self.info.compressed else []
        with pg_env(inst) as env:
            tools.run([tool(inst, "pg_dump"), "-d", "tpch", "-Fp", *level, "-f", str(target)], env=env)
        return target

    def scan_paths(self, ctx: Context, artifact: Path) -> list[Path]:
        return [tools.gunzip_to(artifact, ctx.scratch / "scan.sql")] if self.info.compressed else [artifact]

    def restore(self, ctx: Context, artifact: Path) -> float:
        inst = ctx.state.instance
        self.cleanup(ctx)
        with inst.cluster.connect("postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {RESTORE_DB}")
        clock = Stopwatch()
        with pg_env(inst) as env, clock:
            tools.run([tool(inst, "psql"), "-d", RESTORE_DB, "-q", "-X", "-v", "ON_ERROR_STOP=1"],
                      stdin=artifact, gunzip_in=self.info.compressed, env=env)
        return clock.seconds

    def restored_counts(self, ctx: Context) -> dict[str, int]:
        return _count(ctx, RESTORE_DB)

    def cleanup(self, ctx: Context) -> None:
        with ctx.state.instance.cluster.connect("postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {RESTORE_DB}")


def kinds() -> list[BackupKind]:
    return [PgBasebackupKind(False), PgBasebackupKind(True), PgDumpKind(False), PgDumpKind(True)]
