"""DuckDB (plain) and DuckDB with its own encryption (``tde:aes-256-gcm``, ``tde:aes-256-ctr``) as one engine.

Both twins run the same library (``duckdb`` 1.4.4) with httpfs loaded, so they differ only in encryption. An
instance is one in-memory DuckDB with the database file attached as ``db``: ``ATTACH ... (ENCRYPTION_KEY,
ENCRYPTION_CIPHER)`` for the encrypted twin, whose key (256 random bits as hex) lives only in memory, with
``temp_file_encryption`` on so that spill files are encrypted as the database is. Encryption covers the file's
blocks and the WAL; the file's main header stays plaintext (it says the file is encrypted). The file's lifecycle
on disk or on an ext4 image (``fs:fscrypt``) is :mod:`tdebench.engines.toolkit.filedb`'s.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from tdebench.api.cache import Cache
from tdebench.api.dialect import Dialect
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.footprint import MIB, Footprint
from tdebench.api.keys import KeyPath
from tdebench.api.tables import TableSpec
from tdebench.encryption import PLAIN, EncryptionSpec, SecretKey, parse_spec, redact
from tdebench.engines.duckdb import extensions, load
from tdebench.engines.duckdb.connection import DuckdbConnection
from tdebench.engines.duckdb.schema import without_foreign_keys
from tdebench.engines.duckdb.threats import DuckdbThreats
from tdebench.engines.toolkit import fscrypt
from tdebench.engines.toolkit.filedb import FileDatabase, FileEngine
from tdebench.errors import EnvironmentProblem, RunFailed, UsageError

GCM = parse_spec("tde:aes-256-gcm")
CTR = parse_spec("tde:aes-256-ctr")
_CIPHERS = {GCM: "GCM", CTR: "CTR"}
ALIAS = "db"
# below this DuckDB fails TPC-H queries with Out of Memory (SF 0.1: 16 MiB failed 10 of 22, 32 MiB Q21, 64 MiB none)
MIN_MEMORY = 64 * MIB
# settings a user may change with --server-setting; identical for both twins ("default": DuckDB's own)
_DEFAULTS = {"memory_limit": "default", "threads": "default", "checkpoint_threshold": "default", "keys": "on"}
# tdebench's own settings (not DuckDB's SET): keys=off leaves out the workload's keys and indexes after the load, as
# DuckDB's own TPC-H setup does (its ART indexes stay in memory and need a larger memory_limit)
_OWN = {"keys": ("on", "off")}
_SIZE = re.compile(r"^\d+(\.\d+)?\s*(b|kb|mb|gb|tb|kib|mib|gib|tib)$", re.IGNORECASE)

DUCKDB = Dialect("postgres", "DuckDB", "embedded", "qmark", autocommit=True, begin_sql="BEGIN TRANSACTION",
                 row_locks=False, storage_catalog="none", bulk_load="INSERT ... SELECT FROM read_csv",
                 multi_process=False, rowcount=False, octet_length="strlen({})")


class DuckdbCache(Cache):
    """DuckDB's buffer manager, sized by its memory limit."""

    setting = "memory_limit"
    page_sources = ("memory",)  # it reads through the OS page cache, and decrypts every miss of its own cache

    def resize(self, cache_bytes: int, page_source: str = "") -> dict[str, Any]:
        """``SET memory_limit`` (DuckDB's buffer manager: cached blocks, hash tables and sorts beyond it spill to
        the temporary directory), at least :data:`MIN_MEMORY`, kept across restarts. The OS page cache is left
        alone: DuckDB decrypts every block its buffer manager loads, whether the OS cached the file or not."""
        limit = max(MIN_MEMORY, cache_bytes)
        self.instance._settings["memory_limit"] = f"{limit}B"
        with self.instance._lock:
            if self.instance._root is not None:
                self.instance._root.execute(f"SET memory_limit = '{limit}B'")
        return {"memory_limit": f"{limit}B", "cache_bytes": limit,
                "os_page_cache": "not bounded (DuckDB decrypts every block its buffer manager reads)"}


class DuckdbEngine(FileEngine, Engine):
    """Embedded DuckDB, plain or encrypted."""

    name = "duckdb"
    dialect = DUCKDB
    description = "DuckDB file, plain or encrypted by DuckDB (AES-256-GCM or -CTR: blocks, WAL, temporary files)"
    cache_type = DuckdbCache

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, GCM, CTR, *self.file_specs()]

    def key_path(self, spec: EncryptionSpec) -> KeyPath | None:
        if spec in _CIPHERS:
            return self.library_key_path(256, "DuckDB ENCRYPTION_KEY (256 bits as hex)", "with ATTACH ... "
                                         "(ENCRYPTION_KEY ...)")
        return super().key_path(spec)

    def default_encrypted_spec(self) -> EncryptionSpec:
        return GCM

    def check_available(self) -> None:
        if duckdb.__version__ != extensions.DUCKDB_VERSION:
            raise EnvironmentProblem(f"duckdb {duckdb.__version__} is installed; tdebench measures DuckDB "
                                     f"{extensions.DUCKDB_VERSION} (its httpfs package is built for it)",
                                     extensions.INSTALL_FIX)
        extensions.check_httpfs()  # both twins load it, so that they run the same code

    def check_spec_available(self, spec: EncryptionSpec) -> None:
        extensions.check_httpfs()
        super().check_spec_available(spec)

    def version(self) -> str:
        return f"DuckDB {duckdb.__version__}"

    def default_settings(self) -> dict[str, str]:
        return dict(_DEFAULTS)

    def validate_settings(self, settings: dict[str, str]) -> None:
        for key, value in self.library_settings(settings).items():
            if key not in _DEFAULTS:
                raise UsageError(f"unknown duckdb setting '{key}'", f"use one of: {', '.join(_DEFAULTS)}")
            if key in _OWN:
                if value.lower() not in _OWN[key]:
                    raise UsageError(f"bad value '{value}' for duckdb setting {key}",
                                     f"use one of: {', '.join(_OWN[key])}")
                continue
            if value.lower() == "default":
                continue
            if key == "threads" and not value.isdigit():
                raise UsageError(f"bad value '{value}' for duckdb setting threads", "give a number of threads")
            if key != "threads" and not _SIZE.match(value):
                raise UsageError(f"bad value '{value}' for duckdb setting {key}", "give a size such as 512MB or 2GB")

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "DuckdbInstance":
        return DuckdbInstance(config, workdir, database)

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        return Footprint(peak=1.2, final=0.6, fixed=16 * MIB + self.image_overhead(spec, settings))


class DuckdbInstance(FileDatabase, Instance):
    """One DuckDB database file (with its WAL and spill directory) in its own 0700 directory."""

    dialect = DUCKDB

    def __init__(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self._settings = {**_DEFAULTS, **{k: v for k, v in config.settings.items() if k != fscrypt.STORAGE_KEY}}
        self.place_file(config, workdir, f"{database}.duckdb")
        self.temp_dir = self._dir / "tmp"
        self._cipher = _CIPHERS.get(config.spec)
        self._key = SecretKey.generate(256) if self._cipher else None
        self._root: duckdb.DuckDBPyConnection | None = None
        self._open: weakref.WeakSet[DuckdbConnection] = weakref.WeakSet()
        self._lock = threading.RLock()  # a DuckDB connection object is not thread-safe: the root is shared
        self.skipped: list[str] = []  # statements DuckDB cannot run (foreign keys added after the load)

    @property
    def encrypted(self) -> bool:
        return self._key is not None

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        if self._root is not None:
            return
        super().start()
        self.temp_dir.mkdir(exist_ok=True, mode=0o700)
        root = duckdb.connect(":memory:", config={"autoinstall_known_extensions": "false",
                                                  "autoload_known_extensions": "false",
                                                  "temp_directory": str(self.temp_dir)})
        try:
            extensions.load_httpfs(root)
            self._apply_settings(root)
            self._attach(root)
        except BaseException:
            root.close()
            raise
        self._root = root

    def _apply_settings(self, root: duckdb.DuckDBPyConnection) -> None:
        for key, value in self._settings.items():
            if key not in _OWN and value.lower() != "default":
                root.execute(f"SET {key} = '{value}'")

    def _attach(self, root: duckdb.DuckDBPyConnection) -> None:
        path = str(self.path).replace("'", "''")
        key = self.open_key(self._key)
        options = (f" (ENCRYPTION_KEY '{key.hex()}', ENCRYPTION_CIPHER '{self._cipher}')" if key is not None else "")
        try:
            root.execute(f"ATTACH '{path}' AS {ALIAS}{options}")
        except duckdb.Error as exc:
            text = redact(str(exc).splitlines()[0])
            if extensions.READ_ONLY_CRYPTO in text:
                raise extensions.missing_httpfs("DuckDB has only its read-only crypto module") from None
            raise RunFailed(f"{self.config.label}: DuckDB cannot open {self.path.name}: {text}",
                            "check the disk and the duckdb installation") from None
        if self._key is not None:
            root.execute("SET temp_file_encryption = true")
        root.execute(f"USE {ALIAS}")

    def stop(self) -> None:
        """Close every connection, then detach (DuckDB checkpoints the WAL into the file)."""
        with self._lock:
            for conn in list(self._open):
                conn.close()
            root, self._root = self._root, None
            if root is not None:
                root.close()

    # use -----------------------------------------------------------------------------------
    def connect_raw(self) -> duckdb.DuckDBPyConnection:
        """A new DuckDB connection to the attached database (tdebench's own probes)."""
        with self._lock:
            if self._root is None:
                self.start()
            assert self._root is not None
            raw = self._root.cursor()
        raw.execute(f"USE {ALIAS}")
        return raw

    def connect(self) -> Connection:
        conn = DuckdbConnection(self.connect_raw(), self._forget)
        with self._lock:
            self._open.add(conn)
        return conn

    def _forget(self, conn: DuckdbConnection) -> None:
        with self._lock:
            self._open.discard(conn)

    def create_schema(self, conn: Connection, statements: Sequence[str], tables: Sequence[TableSpec] = ()) -> None:
        """The workload's tables without foreign keys (:mod:`tdebench.engines.duckdb.schema`)."""
        runnable, removed = without_foreign_keys(list(statements))
        self.skipped += removed
        super().create_schema(conn, runnable, tables)

    def create_constraints(self, conn: Connection, statements: Sequence[str]) -> None:
        """Keys and indexes (none with the setting keys=off); foreign keys left out as in :meth:`create_schema`."""
        if self._settings["keys"].lower() == "off":
            self.skipped += [f"{len(statements)} key and index statements (keys=off)"] if statements else []
            return
        runnable, removed = without_foreign_keys(list(statements))
        self.skipped += removed
        self.execute_all(conn, runnable)

    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        raw = conn.raw if isinstance(conn, DuckdbConnection) else conn
        source, escaped = path, load.has_backslash(path)
        if escaped:
            source = load.as_csv(path, self._dir / f".load-{table.name}.csv")
        try:
            rows = raw.execute(load.copy_sql(table, source, escaped)).fetchone()[0]
        finally:
            if escaped:
                source.unlink(missing_ok=True)
        return int(rows)

    def analyze(self, conn: Connection) -> None:
        conn.cursor().execute("ANALYZE")

    def counters(self) -> dict[str, float]:
        """DuckDB counts no pages it decrypts; on an ext4 image the image's block I/O (and for fs:fscrypt the
        estimate of what the kernel decrypted and encrypted that it stands for: toolkit/fscrypt)."""
        return fscrypt.image_counters(self.image, {})

    def flush_to_disk(self) -> None:
        raw = self.connect_raw()
        try:
            raw.execute(f"CHECKPOINT {ALIAS}")
        finally:
            raw.close()
        self.sync_image()

    def cache(self) -> "DuckdbCache":
        return DuckdbCache(self)

    def threats(self) -> DuckdbThreats:
        return DuckdbThreats(self)

    # facts -----------------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self._settings)
        names = ("memory_limit", "threads", "temp_file_encryption", "checkpoint_threshold")
        with self._lock:  # as DuckDB reports them, while it runs (never started again for this)
            if self._root is not None:
                rows = self._root.execute("SELECT name, value FROM duckdb_settings() WHERE name IN "
                                          f"({', '.join(repr(n) for n in names)})").fetchall()
                out.update({str(n): str(v) for n, v in rows})
        out["temp_directory"] = "tmp/ in the instance directory"
        out.update(self.image_facts())
        if self.skipped:
            out["statements_left_out"] = sorted(set(self.skipped))
        if self.encrypted:
            out.update(cipher=f"AES-256-{self._cipher}", key="256 random bits (hex) given with ATTACH")
        return out

    def encryption_status(self) -> dict[str, Any]:
        raw = self.connect_raw()
        try:
            encrypted, cipher = raw.execute("SELECT encrypted, cipher FROM duckdb_databases() "
                                            "WHERE database_name = ?", [ALIAS]).fetchone()
            temp = raw.execute("SELECT current_setting('temp_file_encryption')").fetchone()[0]
        finally:
            raw.close()
        return self.add_filesystem_status({"enabled": bool(encrypted), "cipher": cipher,
                                           "temp_file_encryption": bool(temp), "source": "duckdb_databases()"})

    def check_encrypted(self, schema_tables: list[str]) -> None:
        status = self.encryption_status()
        self.check_filesystem(status)
        if self.encrypted and not (status["enabled"] and status["temp_file_encryption"]):
            raise RunFailed(f"{self.config.label}: DuckDB reports encrypted={status['enabled']}, "
                            f"temp_file_encryption={status['temp_file_encryption']}",
                            "DuckDB did not encrypt the database; check the duckdb installation")
