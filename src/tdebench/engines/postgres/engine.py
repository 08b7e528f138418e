"""PostgreSQL: plain, pgcrypto column encryption (``column:*``) and gocryptfs filesystem encryption (``fs:*``).

Community PostgreSQL has no TDE. Its users encrypt columns with pgcrypto or put the data directory on an
encrypted filesystem; both are offered here against a plain twin with identical settings:

* ``none`` -- a private cluster (see :mod:`tdebench.engines.postgres.server`).
* ``column:aes-{128,192,256}``, ``column:3des``, ``column:pgp-{aes128,aes192,aes256,3des}`` -- every
  non-key column stored as pgcrypto ciphertext (``bytea``) in ``<table>_enc``; views with the original
  table names decrypt, so the TPC-H queries run unchanged (:mod:`tdebench.engines.postgres.column`).
* ``fs:gocryptfs``, ``fs:gocryptfs-aessiv``, ``fs:gocryptfs-xchacha`` -- the whole data directory on a
  gocryptfs mount (:mod:`tdebench.engines.toolkit.fsencrypt`); at-rest scans read the cipher directory.

Instance layout under ``workdir/<label>/`` (owned by the service user, mode 0700; a symlink to
``/var/tmp/tdebench-<label>-<random>/`` when that user cannot reach ``workdir``)::

    pgdata/                 data directory (plain and column configs)
    fs/cipher/  fs/plain/   gocryptfs: what is on disk / the mount, data directory in fs/plain/pgdata
    run/                    Unix socket (0700)
    postgres.log            server log (never statements or parameters)
"""

from __future__ import annotations

import importlib.util
import logging
import os
import secrets
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tdebench.api.dialect import POSTGRES
from tdebench.api.engine import CANARY_TABLE, DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.footprint import MIB, Footprint, size_setting
from tdebench.api.tables import TableSpec
from tdebench.encryption import PLAIN, EncryptionSpec, parse_spec
from tdebench.engines.toolkit import fsencrypt
from tdebench.engines.postgres.counters import PostgresCounters, check_headroom, libdir, with_preload
from tdebench.engines.postgres.server import (DEFAULTS, PgCluster, extension_available, find_bindir,
                                              server_version, user_can_reach, validate_gucs)
from tdebench.engines.postgres.threats import PostgresThreatProbes
from tdebench.engines.postgres.tools import PostgresTools
from tdebench.engines.postgres.warm import cached_blocks, prewarm
from tdebench.engines.toolkit.process import service_user
from tdebench.errors import EnvironmentProblem, RunFailed

log = logging.getLogger(__name__)

COLUMN_SPECS = [parse_spec(t) for t in ("column:aes-128", "column:aes-192", "column:aes-256", "column:3des",
                                         "column:pgp-aes128", "column:pgp-aes192", "column:pgp-aes256",
                                         "column:pgp-3des")]
# config.settings keys that are tdebench options, not PostgreSQL settings
TDEBENCH_KEYS = ("encrypt_columns", "pgp_options", "memory_headroom")
_COPY_CHUNK = 1 << 20
RELOCATE_BASE = "/var/tmp"


class PostgresEngine(Engine):
    """A private PostgreSQL cluster per config."""

    name = "postgres"
    dialect = POSTGRES
    description = ("PostgreSQL (Debian postgresql), plain, pgcrypto column encryption (AES-128/192/256, 3DES, "
                   "OpenPGP) or the data directory on gocryptfs (AES-256-GCM, AES-SIV, XChaCha20-Poly1305)")
    cache_setting = "shared_buffers"
    warm_restart = True
    memory_headroom = 512 * 1024 * 1024  # the memory cgroup's room beyond the cache (postgres_counters._headroom)

    def __init__(self) -> None:
        self._bindir: Path | None = None

    @property
    def bindir(self) -> Path:
        if self._bindir is None:
            self._bindir = find_bindir()
        return self._bindir

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, *COLUMN_SPECS, *fsencrypt.fs_specs()]

    def default_encrypted_spec(self) -> EncryptionSpec:
        return parse_spec("column:aes-256")

    def check_available(self) -> None:
        _ = self.bindir
        if importlib.util.find_spec("psycopg") is None:
            raise EnvironmentProblem("the Python driver psycopg is missing", "pip install 'psycopg[binary]'")

    def check_spec_available(self, spec: EncryptionSpec) -> None:
        """EnvironmentProblem if what ``spec`` needs (pgcrypto, FUSE, gocryptfs) is not installed."""
        self.check_available()
        if spec.mechanism == "column" and not extension_available(self.bindir, "pgcrypto"):
            raise EnvironmentProblem("the PostgreSQL extension pgcrypto is not installed",
                                     "install the Debian package postgresql-contrib")
        if fsencrypt.is_fs_spec(spec):
            fsencrypt.check_available()

    def version(self) -> str:
        return server_version(self.bindir)

    def default_settings(self) -> dict[str, str]:
        return dict(DEFAULTS)

    def validate_settings(self, settings: dict[str, str]) -> None:
        from tdebench.engines.postgres.column import validate_column_options

        validate_gucs({k: v for k, v in settings.items() if k not in TDEBENCH_KEYS})
        validate_column_options(settings)
        check_headroom(settings)

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "PostgresInstance":
        self.validate_spec(config.spec)
        self.validate_settings(dict(config.settings))
        self.check_spec_available(config.spec)
        if config.spec.mechanism == "column":
            from tdebench.engines.postgres.column import PgColumnInstance

            return PgColumnInstance(config, workdir, self.bindir, database)
        return PostgresInstance(config, workdir, self.bindir, database)

    def check_tables(self, config: Config, tables: Sequence[TableSpec]) -> None:
        """``encrypt_columns`` must name non-key columns of the workload's tables."""
        if config.settings.get("encrypt_columns"):
            from tdebench.engines.postgres.column import check_encrypt_columns

            check_encrypt_columns(config.settings["encrypt_columns"], tables)

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        """Measured per mechanism (docs/reliability.md); WAL is capped by max_wal_size (+25%: a soft limit).
        gocryptfs hides which files are WAL, so fs takes plain PostgreSQL's log factor."""
        cap = size_setting(settings.get("max_wal_size"), MIB, 1024 * MIB) * 1.25
        if spec.mechanism == "column" and spec.cipher.startswith("pgp"):
            return Footprint(peak=11.5, final=9.3, log=8.9, fixed=80 * MIB, log_cap=cap)
        if spec.mechanism == "column":
            return Footprint(peak=3.4, final=3.0, log=3.3, fixed=80 * MIB, log_cap=cap)
        fixed = 80 * MIB if fsencrypt.is_fs_spec(spec) else 64 * MIB
        return Footprint(peak=2.7, final=2.0, log=1.8, fixed=fixed, log_cap=cap)


class PostgresInstance(PostgresTools, PostgresThreatProbes, PostgresCounters, Instance):
    """One private cluster (plain, or on a gocryptfs mount for ``fs:*``)."""

    dialect = POSTGRES
    extensions: tuple[str, ...] = ()

    def __init__(self, config: Config, workdir: Path, bindir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self.bindir = bindir
        self.link = workdir / config.label
        self.user = service_user()
        self.relocated = ""
        self._version = ""
        self._layout(self._choose_home())

    def _choose_home(self) -> Path:
        if user_can_reach(self.workdir, self.user):
            return self.link
        return Path(RELOCATE_BASE, f"tdebench-{self.config.label}-{secrets.token_hex(4)}")

    def _layout(self, home: Path) -> None:
        """Paths, mount and cluster objects for an instance living in ``home``."""
        self.home = home
        self.fs = (fsencrypt.GocryptfsMount(self.config.spec, home / "fs", owner=self.user)
                   if fsencrypt.is_fs_spec(self.config.spec) else None)
        pgdata = self.fs.plain_dir / "pgdata" if self.fs else home / "pgdata"
        gucs = with_preload({k: v for k, v in self.config.settings.items() if k not in TDEBENCH_KEYS},
                            libdir(self.bindir))
        self.cluster = PgCluster(self.bindir, home, pgdata, gucs, self.config.tcp, self.user, self.database)

    # lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        if self.cluster.running():
            return
        try:
            self._prepare_home()
            if self.fs is not None:
                self.fs.mount()
            if not self.cluster.initialized():
                self.cluster.initdb()
            self.cluster.start()
            self.attach_memory_cap()
            self.cluster.create_database(self.extensions)
            self.after_start()
        except BaseException:
            self.stop()
            raise

    def alive(self) -> bool:
        """False once the server (or the gocryptfs mount under it) has died."""
        return self.cluster.running() and (self.fs is None or self.fs.mounted())

    def after_start(self) -> None:
        """Hook for subclasses: runs after every start, with the database in place."""

    def _prepare_home(self) -> None:
        """Create the 0700 instance directory owned by the service user (first start only).

        If that user cannot reach ``workdir`` (pytest's 0700 temp dirs, a home directory), the instance
        lives in ``/var/tmp/tdebench-<label>-<random>`` and ``workdir/<label>`` is a symlink to it:
        tdebench does not loosen permissions on directories it does not own.
        """
        if self.home.is_dir():
            return
        self.link.parent.mkdir(parents=True, exist_ok=True)
        if (self.home == self.link) != user_can_reach(self.workdir, self.user):  # workdir made since __init__
            self._layout(self._choose_home())
        self.home.mkdir(mode=0o700)
        os.chmod(self.home, 0o700)
        if self.home != self.link:
            if self.link.is_symlink():
                self.link.unlink()
            self.link.symlink_to(self.home, target_is_directory=True)
            self.relocated = (f"{self.link.parent} is not reachable for the OS user "
                              f"'{self.user.pw_name if self.user else '?'}'; instance created in {self.home}")
            log.info("%s", self.relocated)
        if self.user is not None:
            os.chown(self.home, self.user.pw_uid, self.user.pw_gid)

    def save_cache(self) -> dict[str, Any]:
        """The cached blocks of the benchmark database (pg_buffercache): ``postgres_warm``."""
        with self.cluster.connect("postgres", autocommit=True) as conn:
            cached = cached_blocks(conn, self.database)
        return {"pages_cached": sum(len(b) for b in cached.values()), "_blocks": cached}

    def load_cache(self, saved: dict[str, Any]) -> dict[str, Any]:
        """Read the saved blocks back into shared_buffers (pg_prewarm): ``postgres_warm``."""
        with self.cluster.connect(autocommit=True) as conn:
            return {"pages_loaded": prewarm(conn, saved["_blocks"])}

    def stop(self) -> None:
        self.close_counters()
        self.cluster.stop()
        if self.fs is not None:
            self.fs.unmount()

    def destroy(self) -> None:
        self.stop()
        self.remove_memory_cap()
        self.cluster.cleanup()
        if self.config.keep:
            return
        if self.fs is not None:
            self.fs.destroy()
        shutil.rmtree(self.home, ignore_errors=True)
        if self.link.is_symlink():
            self.link.unlink()

    # use ---------------------------------------------------------------------------------------
    def connect(self) -> Connection:
        return self.cluster.connect()

    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        rows = self.copy_file(conn, table.name, table.column_names, path)
        conn.commit()
        return rows

    def drop_tables(self, conn: Connection, tables: Sequence[str]) -> None:
        cur = conn.cursor()
        for name in reversed(tables):
            cur.execute(f"DROP TABLE IF EXISTS {self.relation_name(name)} CASCADE")
        conn.commit()

    @staticmethod
    def copy_file(conn: Any, target: str, columns: list[str], path: Path) -> int:
        """COPY a data file (``|`` between fields and after the last, backslash escapes: the layout of
        :mod:`tdebench.api.tables`, which is COPY's text format but for the trailing ``|``) into ``target``."""
        rows = 0
        with conn.cursor() as cur:
            sql = f"COPY {target} ({', '.join(columns)}) FROM STDIN (FORMAT text, DELIMITER '|')"
            with cur.copy(sql) as copy, open(path, "rb") as handle:
                rest = b""
                while True:
                    block = handle.read(_COPY_CHUNK)
                    data = rest + block
                    cut = data.rfind(b"\n") + 1 if block else len(data)
                    chunk, rest = data[:cut], data[cut:]
                    if chunk:
                        if not chunk.endswith(b"\n"):
                            chunk += b"\n"
                        rows += chunk.count(b"\n")
                        copy.write(chunk.replace(b"|\n", b"\n"))
                    if not block:
                        break
        return rows

    def analyze(self, conn: Connection) -> None:
        """VACUUM (ANALYZE): statistics plus visibility map and hint bits, so first queries do not write."""
        conn.commit()
        previous = conn.autocommit  # type: ignore[attr-defined]
        conn.autocommit = True  # type: ignore[attr-defined]
        try:
            conn.cursor().execute("VACUUM (ANALYZE)")
        finally:
            conn.autocommit = previous  # type: ignore[attr-defined]

    def plant_canaries(self, markers: list[str]) -> None:
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(f"CREATE TABLE IF NOT EXISTS {CANARY_TABLE} "
                        "(id INTEGER PRIMARY KEY, marker VARCHAR(64) NOT NULL)")
            cur.execute(f"SELECT coalesce(max(id), 0) FROM {CANARY_TABLE}")
            first = cur.fetchone()[0] + 1
            for i, marker in enumerate(markers, start=first):
                cur.execute(f"INSERT INTO {CANARY_TABLE} (id, marker) VALUES (%s, %s)", [i, marker])
            conn.commit()
        finally:
            conn.close()

    # facts -------------------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        """What is on disk: the data directory, or gocryptfs' cipher directory for ``fs:*``."""
        return self.fs.cipher_dir if self.fs is not None else self.cluster.pgdata

    def server_pids(self) -> list[int]:
        """The postmaster and its children, plus the gocryptfs daemon (it does the encrypting)."""
        return self.cluster.pids() + (self.fs.pids() if self.fs is not None else [])

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.cluster.gucs)
        if self.cluster.running():
            out.update(self.cluster.effective_settings(sorted(out)))
        if not self._version:
            self._version = server_version(self.bindir)
        out.update({
            "server_version": self._version,
            "os_user": self.user.pw_name if self.user else "(current user)",
            "listen": "127.0.0.1 (TCP) and Unix socket" if self.config.tcp else "Unix socket only",
            "initdb": "--locale=C --encoding=UTF8, no data checksums",
            "auth": "scram-sha-256, generated password",
            "load": "COPY FROM STDIN, then VACUUM (ANALYZE)",
        })
        if self.fs is not None:
            out["fs_encryption"] = {"tool": fsencrypt.gocryptfs_version(), "cipher": self.fs.algorithm,
                                    "runs_as": self.fs.owner.pw_name if self.fs.owner else "(current user)",
                                    "mount_reachable_by": "that user only (no -allow_other)"}
        return out

    def encryption_status(self) -> dict[str, Any]:
        if self.fs is None:
            return {"enabled": False, "mechanism": "none"}
        status = self.fs.status()
        data_directory = None
        if self.cluster.running():
            with self.cluster.connect("postgres", autocommit=True) as conn:
                data_directory = conn.execute("SHOW data_directory").fetchone()[0]
        inside = data_directory is not None and Path(data_directory).is_relative_to(self.fs.plain_dir)
        status.update(data_directory=data_directory, data_directory_on_mount=inside,
                      enabled=bool(status["enabled"] and inside))
        return status

    def check_encrypted(self, schema_tables: list[str]) -> None:
        if self.fs is None:
            return
        status = self.encryption_status()
        if not status["enabled"]:
            raise RunFailed(f"{self.config.label}: the data directory is not on a gocryptfs mount "
                            f"(mount: {status['mount']}, data_directory: {status['data_directory']})",
                            "check the gocryptfs log in the instance directory")

    def flush_to_disk(self) -> None:
        with self.cluster.connect(autocommit=True) as conn:
            conn.execute("CHECKPOINT")

    def storage_breakdown(self) -> dict[str, Any]:
        """Catalog sizes per table (heap, TOAST, indexes, total), the database, WAL and bytes on disk.

        ``tables`` is keyed by the logical table name; for ``fs:*`` the catalog sizes are the plaintext
        view and ``data_dir_bytes`` is what the cipher directory really occupies.
        """
        sql = """
            SELECT c.relname, c.reltuples::bigint,
                   pg_table_size(c.oid) - coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0),
                   coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0),
                   pg_indexes_size(c.oid), pg_total_relation_size(c.oid)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.relname"""
        names = {self.relation_name(t): t for t in self.logical_tables()}
        tables: dict[str, dict[str, Any]] = {}
        with self.cluster.connect(autocommit=True) as conn:
            for relname, rows, heap, toast, index, total in conn.execute(sql).fetchall():
                if relname.startswith(CANARY_TABLE):
                    continue
                tables[names.get(relname, relname)] = {
                    "relation": relname, "rows": max(int(rows), 0), "table_bytes": int(heap),
                    "toast_bytes": int(toast), "index_bytes": int(index), "total_bytes": int(total)}
            database = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
            wal = conn.execute("SELECT coalesce(sum(size), 0) FROM pg_ls_waldir()").fetchone()[0]
        keys = ("table_bytes", "toast_bytes", "index_bytes", "total_bytes")
        return {"tables": tables, "totals": {k: sum(t[k] for t in tables.values()) for k in keys},
                "database_bytes": int(database), "wal_bytes": int(wal), "data_dir_bytes": self.storage_bytes()}

    def logical_tables(self) -> list[str]:
        """The workload's tables (as given to :meth:`create_schema`)."""
        return list(self.tables)


def storage_growth(baseline: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Growth factors (other / baseline) of two :meth:`PostgresInstance.storage_breakdown` results."""
    def ratio(a: float, b: float) -> float | None:
        return round(b / a, 3) if a else None

    keys = ("table_bytes", "toast_bytes", "index_bytes", "total_bytes")
    tables = {name: {k: ratio(sizes[k], other["tables"][name][k]) for k in keys}
              for name, sizes in baseline["tables"].items() if name in other["tables"]}
    return {"tables": tables, "totals": {k: ratio(baseline["totals"][k], other["totals"][k]) for k in keys},
            "database_bytes": ratio(baseline["database_bytes"], other["database_bytes"]),
            "data_dir_bytes": ratio(baseline["data_dir_bytes"], other["data_dir_bytes"])}
