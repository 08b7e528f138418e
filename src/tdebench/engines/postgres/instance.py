"""One private PostgreSQL cluster: start, stop, load, canaries, settings and storage of a plain or ``fs:*``
instance (:class:`PostgresInstance`); pgcrypto column instances extend it (:mod:`.column`), and
:class:`~tdebench.engines.postgres.engine.PostgresEngine` chooses between them.

Layout under ``workdir/<label>/`` (owned by the service user, mode 0700; a symlink to
``/var/tmp/tdebench-<label>-<random>/`` when that user cannot reach ``workdir``)::

    pgdata/                 data directory (plain and column configs)
    fs/cipher/  fs/plain/   gocryptfs: what is on disk / the mount, data directory in fs/plain/pgdata
    ext4/image/ ext4/mnt/   fs:fscrypt (and its plain twin, storage=ext4-loop): the ext4 image / its mount,
                            data directory in ext4/mnt/data/pgdata (toolkit/fscrypt)
    run/                    Unix socket (0700)
    postgres.log            server log (never statements or parameters)
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tdebench.api.footprint import allocated_bytes
from tdebench.api.dialect import POSTGRES
from tdebench.api.keys import KeyAccess
from tdebench.api.switcher import Switcher
from tdebench.api.engine import CANARY_TABLE, DEFAULT_DATABASE, Config, Connection, Instance
from tdebench.api.tables import TableSpec
from tdebench.engines.toolkit import fscrypt, fsencrypt
from tdebench.engines.toolkit.bulkload import copy_file
from tdebench.engines.postgres.counters import PostgresCounters, SharedBuffers, libdir, with_preload
from tdebench.engines.postgres.layer import PostgresLayerSwitcher
from tdebench.engines.postgres.server import PgCluster, server_version
from tdebench.engines.toolkit.asuser import user_can_reach
from tdebench.engines.toolkit.fslayer import is_layer_spec
from tdebench.engines.postgres.threats import PostgresThreats
from tdebench.engines.postgres.tools import PostgresServerAccess
from tdebench.engines.postgres.warm import cached_blocks, prewarm
from tdebench.engines.toolkit.process import service_user
from tdebench.errors import RunFailed

log = logging.getLogger(__name__)

# config.settings keys that are tdebench options, not PostgreSQL settings
TDEBENCH_KEYS = ("encrypt_columns", "pgp_options", "memory_headroom", fscrypt.STORAGE_KEY)
RELOCATE_BASE = "/var/tmp"


class PostgresInstance(PostgresCounters, Instance):
    """One private cluster (plain, or on a gocryptfs mount for ``fs:*``)."""

    dialect = POSTGRES
    extensions: tuple[str, ...] = ()
    in_layer = True  # pgdata inside the fs: spec's layer (an fs: switch starts with it moved out: layer.py)

    def __init__(self, config: Config, workdir: Path, bindir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self.bindir = bindir
        self.link = workdir / config.label
        self.user = service_user()
        self.relocated = ""
        self._version = ""
        self._layout(self._choose_home())
        self._switcher: Switcher[Any] | None = (PostgresLayerSwitcher(self) if is_layer_spec(config.spec)
                                                 else None)

    def _choose_home(self) -> Path:
        if user_can_reach(self.workdir, self.user):
            return self.link
        return Path(RELOCATE_BASE, f"tdebench-{self.config.label}-{secrets.token_hex(4)}")

    def _layout(self, home: Path) -> None:
        """Paths, mount and cluster objects for an instance living in ``home``."""
        self.home = home
        self.image = (fscrypt.Ext4Image(self.config.spec, home / "ext4", owner=self.user)
                      if fscrypt.on_loop_image(self.config.spec, self.config.settings) else None)
        # gocryptfs beside fscrypt twins (storage=ext4-loop): its cipher directory on the same kind of ext4 image
        self.fs = (fsencrypt.GocryptfsMount(self.config.spec, self.image.data_dir / "gocryptfs" if self.image
                                            else home / "fs", owner=self.user)
                   if fsencrypt.is_fs_spec(self.config.spec) else None)
        pgdata = (self.fs.plain_dir / "pgdata" if self.fs else
                  self.image.data_dir / "pgdata" if self.image else home / "pgdata")
        gucs = with_preload({k: v for k, v in self.config.settings.items() if k not in TDEBENCH_KEYS},
                            libdir(self.bindir))
        self.pgcluster = PgCluster(self.bindir, home, pgdata, gucs, self.config.tcp, self.user, self.database,
                                   templated=self.fs is None)

    def switcher(self) -> Switcher[Any] | None:
        """``fs:`` specs: pgdata copied into the encrypted layer with the cluster stopped (pgcrypto column instances:
        their own switcher)."""
        return self._switcher

    def take_keys(self, access: KeyAccess) -> None:
        """The filesystem's key (fs:fscrypt, fs:gocryptfs*) or pgcrypto's (column:*) from the key server."""
        super().take_keys(access)
        for layer in (self.image, self.fs):
            if layer is not None:
                layer.key_access = access

    # lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        if self.pgcluster.running():
            return
        try:
            self._prepare_home()
            if self.image is not None:
                self.image.mount()
            if self.fs is not None:
                self.fs.mount()
            if not self.pgcluster.initialized():
                self.pgcluster.initdb()
            self.pgcluster.start()
            self.attach_memory_cap()
            self.pgcluster.create_database(self.extensions)
            self.after_start()
        except BaseException:
            self.stop()
            raise

    def alive(self) -> bool:
        """False once the server (or the gocryptfs mount under it) has died."""
        return (self.pgcluster.running() and (self.fs is None or self.fs.mounted())
                and (self.image is None or self.image.mounted()))

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

    def cache(self) -> SharedBuffers:
        return SharedBuffers(self)

    def threats(self) -> PostgresThreats:
        return PostgresThreats(self)

    def server_access(self) -> PostgresServerAccess:
        return PostgresServerAccess(self)

    def save_cache(self) -> dict[str, Any]:
        """The cached blocks of the benchmark database (pg_buffercache): :mod:`.warm`."""
        with self.pgcluster.connect("postgres", autocommit=True) as conn:
            cached = cached_blocks(conn, self.database)
        return {"pages_cached": sum(len(b) for b in cached.values()), "_blocks": cached}

    def load_cache(self, saved: dict[str, Any]) -> dict[str, Any]:
        """Read the saved blocks back into shared_buffers (pg_prewarm): :mod:`.warm`."""
        with self.pgcluster.connect(autocommit=True) as conn:
            return {"pages_loaded": prewarm(conn, saved["_blocks"])}

    def stop(self) -> None:
        self.close_counters()
        self.pgcluster.stop()
        if self.fs is not None:
            self.fs.unmount()

    def destroy(self) -> None:
        self.stop()
        self.remove_memory_cap()
        self.pgcluster.cleanup()
        if self.config.keep:
            return
        if self.fs is not None:
            self.fs.destroy()
        if self.image is not None:
            self.image.destroy()
        shutil.rmtree(self.home, ignore_errors=True)
        if self.link.is_symlink():
            self.link.unlink()

    # use ---------------------------------------------------------------------------------------
    def connect(self) -> Connection:
        return self.pgcluster.connect()

    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        rows = copy_file(conn, table.name, table.column_names, path)
        conn.commit()
        return rows

    def drop_tables(self, conn: Connection, tables: Sequence[str]) -> None:
        cur = conn.cursor()
        for name in reversed(tables):
            cur.execute(f"DROP TABLE IF EXISTS {self.relation_name(name)} CASCADE")
        conn.commit()

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
        """What is on disk: the data directory, or gocryptfs' cipher directory for ``fs:*`` (out of the layer, before
        an ``fs:`` switch: the instance's directory)."""
        if not self.in_layer:
            return self.home
        if self.image is not None:
            return self.image.image_dir
        return self.fs.cipher_dir if self.fs is not None else self.pgcluster.pgdata

    def server_pids(self) -> list[int]:
        """The postmaster and its children, plus the gocryptfs daemon (it does the encrypting)."""
        return self.pgcluster.pids() + (self.fs.pids() if self.fs is not None else [])

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.pgcluster.gucs)
        if self.pgcluster.running():
            out.update(self.pgcluster.effective_settings(sorted(out)))
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
        if self.image is not None:
            out.update(self.image.facts())
        if self.fs is not None:
            out.update(self.fs.facts())
        return out

    def encryption_status(self) -> dict[str, Any]:
        if self.image is not None and self.fs is None:
            return self._image_status()
        if self.fs is None:
            return {"enabled": False, "mechanism": "none"}
        data_directory = None
        if self.pgcluster.running():
            with self.pgcluster.connect("postgres", autocommit=True) as conn:
                data_directory = conn.execute("SHOW data_directory").fetchone()[0]
        return self.fs.status_of(data_directory)

    def _image_status(self) -> dict[str, Any]:
        assert self.image is not None
        fs = self.image.status()
        data_directory = None
        if self.pgcluster.running():
            with self.pgcluster.connect("postgres", autocommit=True) as conn:
                data_directory = conn.execute("SHOW data_directory").fetchone()[0]
        inside = data_directory is not None and Path(data_directory).is_relative_to(self.image.data_dir)
        enabled = bool(fscrypt.is_fscrypt_spec(self.config.spec) and fs["enabled"] and inside)
        return {"enabled": enabled, "mechanism": fs["mechanism"], "filesystem": fs,
                "data_directory": data_directory, "data_directory_on_mount": inside}

    def check_encrypted(self, schema_tables: list[str]) -> None:
        if self.image is not None and fscrypt.is_fscrypt_spec(self.config.spec):
            status = self._image_status()
            if not status["enabled"]:
                raise RunFailed(f"{self.config.label}: the data directory is not in an unlocked fscrypt directory "
                                f"(data_directory: {status['data_directory']}, "
                                f"key {status['filesystem']['key_status']})",
                                "check that the ext4 image is mounted")
            return
        if self.fs is None:
            return
        status = self.encryption_status()
        if not status["enabled"]:
            raise RunFailed(f"{self.config.label}: the data directory is not on a gocryptfs mount "
                            f"(mount: {status['mount']}, data_directory: {status['data_directory']})",
                            "check the gocryptfs log in the instance directory")

    def flush_to_disk(self) -> None:
        with self.pgcluster.connect(autocommit=True) as conn:
            conn.execute("CHECKPOINT")
        if self.image is not None:  # what the filesystem holds, into the image's blocks
            self.image.sync()

    @property
    def snapshot_dir(self) -> Path:
        """The data directory, or gocryptfs' cipher directory; on an ext4 image the data directory as mounted (the
        image stays mounted while the server is stopped)."""
        if self.fs is not None:
            return self.fs.cipher_dir
        return self.pgcluster.pgdata if self.image is not None else self.data_dir

    def storage_bytes(self) -> int:
        """Bytes of the data directory's files; on an ext4 image, as its mount shows them (like the plain twin's),
        not the sparse image's apparent size."""
        root = (self.pgcluster.pgdata if not self.in_layer or (self.image is not None and self.fs is None) else
                self.fs.cipher_dir if self.fs is not None else self.data_dir)
        return allocated_bytes(root)

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
        with self.pgcluster.connect(autocommit=True) as conn:
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
