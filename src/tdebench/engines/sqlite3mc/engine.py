"""SQLite3 Multiple Ciphers as an engine of its own: plain SQLite 3.54 and its page ciphers, one library.

Both twins open their file with ``apsw-sqlite3mc`` (SQLite 3.54, SQLite3MC 2.6); without a key it is plain
SQLite, so twins differ only in the cipher. The sqlite engine's twins use ``sqlcipher3`` (an older SQLite):
comparing a SQLite3MC cipher with that plain twin would mix the library version into the cost, hence an engine
of its own (docs/engines/sqlite3mc.md). The encrypted twin gets a fresh random raw key (``PRAGMA key =
"x'<hex>'"``: no passphrase derivation on every open) that lives only in memory. ``fs:fscrypt`` keeps the plain
file in an fscrypt directory of a loop-mounted ext4 image, as the sqlite engine does (toolkit/fscrypt).
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from tdebench.api.dialect import SQLITE
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.footprint import MIB, Footprint
from tdebench.api.tables import TableSpec
from tdebench.encryption import PLAIN, EncryptionSpec, SecretKey, parse_spec
from tdebench.engines.sqlite3mc import counters
from tdebench.engines.sqlite3mc.connection import McConnection
from tdebench.engines.sqlite3mc.load import load_file
from tdebench.engines.sqlite3mc.settings import DEFAULTS, validate
from tdebench.engines.sqlite3mc.threats import McThreatProbes
from tdebench.engines.toolkit import fscrypt
from tdebench.errors import EnvironmentProblem, RunFailed

#: spec cipher -> (SQLite3MC cipher, AEGIS algorithm or "", key bytes, what it is)
CIPHERS: dict[str, tuple[str, str, int, str]] = {
    "chacha20": ("chacha20", "", 32, "ChaCha20-Poly1305"),
    "aes-128-cbc": ("aes128cbc", "", 16, "AES-128-CBC (wxSQLite3 scheme, no MAC)"),
    "aes-256-cbc": ("aes256cbc", "", 32, "AES-256-CBC (wxSQLite3 scheme, no MAC)"),
    "sqlcipher": ("sqlcipher", "", 32, "SQLCipher 4 scheme: AES-256-CBC + HMAC-SHA512"),
    "ascon128": ("ascon128", "", 32, "Ascon-128 AEAD"),
    "aegis": ("aegis", "", 32, "AEGIS (SQLite3MC's default algorithm, AEGIS-256)"),
    **{f"aegis-{v}": ("aegis", f"aegis-{v}", 32, f"AEGIS-{v.upper()}")
       for v in ("128l", "128x2", "128x4", "256", "256x2", "256x4")},
}
SPECS = [parse_spec(f"sqlite3mc:{name}") for name in CIPHERS]
CHACHA20 = parse_spec("sqlite3mc:chacha20")
PLAIN_HEADER = b"SQLite format 3\x00"
DIALECT = dataclasses.replace(SQLITE, product="SQLite3 Multiple Ciphers", backup_tools=())


class Sqlite3mcEngine(Engine):
    """Embedded SQLite3 Multiple Ciphers."""

    name = "sqlite3mc"
    dialect = DIALECT
    description = ("SQLite 3.54 file via SQLite3 Multiple Ciphers: plain, ChaCha20-Poly1305, AES-128/256-CBC, "
                   "SQLCipher 4, Ascon-128 or AEGIS per page")
    cache_setting = "cache_size"

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, *SPECS, *fscrypt.fs_specs()]

    def check_spec_available(self, spec: EncryptionSpec) -> None:
        if fscrypt.is_fscrypt_spec(spec):
            fscrypt.check_available(spec)

    def plan_settings(self, specs: Sequence[EncryptionSpec]) -> dict[str, str]:
        return fscrypt.plan_settings(list(specs))

    def default_encrypted_spec(self) -> EncryptionSpec:
        return CHACHA20

    def check_available(self) -> None:
        try:
            conn = apsw.Connection(":memory:")
            conn.execute("SELECT sqlite3mc_version()").fetchall()
            conn.close()
        except Exception as exc:  # noqa: BLE001
            raise EnvironmentProblem(f"apsw-sqlite3mc does not work: {exc}", "pip install apsw-sqlite3mc") from exc

    def version(self) -> str:
        conn = apsw.Connection(":memory:")
        try:
            return f"SQLite {apsw.sqlite_lib_version()}, {conn.execute('SELECT sqlite3mc_version()').fetchall()[0][0]}"
        finally:
            conn.close()

    def default_settings(self) -> dict[str, str]:
        return dict(DEFAULTS)

    def validate_settings(self, settings: dict[str, str]) -> None:
        fscrypt.validate_storage(settings)
        if fscrypt.on_loop_image(PLAIN, settings):
            fscrypt.check_available()
        validate({k: v for k, v in settings.items() if k != fscrypt.STORAGE_KEY})

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "McInstance":
        return McInstance(config, workdir, database)

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        image = fscrypt.EXT4_OVERHEAD if fscrypt.on_loop_image(spec, settings) else 0
        return Footprint(peak=1.7, final=1.7, fixed=16 * MIB + image)


class McInstance(McThreatProbes, Instance):
    """One database file in its own 0700 directory."""

    dialect = DIALECT

    def __init__(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self._settings = {**DEFAULTS, **{k: v.lower() for k, v in config.settings.items()
                                         if k != fscrypt.STORAGE_KEY}}
        self._home = workdir / config.label
        self.image = (fscrypt.Ext4Image(config.spec, self._home / "fs")
                      if fscrypt.on_loop_image(config.spec, config.settings) else None)
        self._dir = self.image.data_dir if self.image is not None else self._home
        self.path = self._dir / f"{database}.db"
        self._cipher = CIPHERS.get(config.spec.cipher) if not config.spec.is_plain else None
        self._key = SecretKey.generate(self._cipher[2] * 8) if self._cipher else None
        self._pages = counters.PageCounts()

    @property
    def encrypted(self) -> bool:
        return self._key is not None

    @property
    def data_dir(self) -> Path:
        """The database's directory, or the ext4 image holding it (scanned as raw blocks)."""
        return self.image.image_dir if self.image is not None else self._dir

    @property
    def snapshot_dir(self) -> Path:
        """The database's directory (on an ext4 image: as mounted)."""
        return self._dir

    def database_file(self) -> Path:
        return self.path

    def start(self) -> None:
        self._home.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.image is not None:
            self.image.mount()
        self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)

    def alive(self) -> bool:
        return self.image is None or self.image.mounted()

    def stop(self) -> None:
        """Nothing runs between connections (an ext4 image stays mounted until :meth:`destroy`)."""

    def destroy(self) -> None:
        if self.image is not None:
            self.image.destroy(keep=self.config.keep)
        if not self.config.keep:
            shutil.rmtree(self._home, ignore_errors=True)

    def storage_bytes(self) -> int:
        """Bytes of the database's files (on an ext4 image: as the mount shows them)."""
        return sum(p.stat().st_size for p in self._dir.rglob("*") if p.is_file())

    def connect(self) -> Connection:
        return self.connect_path(self.path)

    def connect_path(self, path: Path) -> McConnection:
        """A connection to ``path`` with this instance's key and settings."""
        raw = apsw.Connection(str(path))
        s = self._settings
        if self._cipher is not None and self._key is not None:
            # cipher (and AEGIS algorithm) first, then the raw key: SQLite3MC's order
            raw.execute(f"PRAGMA cipher = '{self._cipher[0]}'").fetchall()
            if self._cipher[1]:
                raw.execute(f"PRAGMA algorithm = '{self._cipher[1]}'").fetchall()
            raw.execute(f"PRAGMA key = \"x'{self._key.hex()}'\"").fetchall()
        raw.execute(f"PRAGMA page_size = {int(s['page_size'])}").fetchall()
        for pragma in ("cache_size", "journal_mode", "synchronous", "temp_store"):
            raw.execute(f"PRAGMA {pragma} = {s[pragma].upper()}").fetchall()
        raw.execute("PRAGMA foreign_keys = OFF").fetchall()
        raw.set_busy_timeout(600_000)  # throughput test: readers wait for the refresh stream
        if Path(path) != self.path:
            return McConnection(raw)
        slot = self._pages.adopt(raw)
        return McConnection(raw, lambda c: self._pages.publish(c.raw, slot),
                            lambda c: self._pages.release(c.raw, slot))

    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        return load_file(conn, table, path)

    def analyze(self, conn: Connection) -> None:
        conn.cursor().execute("ANALYZE")

    def counters(self) -> dict[str, float]:
        """As the sqlite engine's: page-cache hits and misses of every connection (each miss is a page the cipher
        decrypts, each page written one it encrypts), and the process's read()/write() bytes."""
        page = int(self._settings["page_size"])
        rchar, wchar = counters.process_io()
        t = self._pages.totals()
        return fscrypt.image_counters(self.image, {
            "page_size": page, "bytes_read": rchar, "bytes_written": wchar,
            "cache_requests": t.hits + t.misses, "cache_misses": t.misses, "pages_read": t.misses,
            "pages_written": t.writes, "bytes_decrypted": t.misses * page if self.encrypted else 0,
            "bytes_encrypted": t.writes * page if self.encrypted else 0})

    def resize_cache(self, cache_bytes: int) -> dict[str, Any]:
        """``PRAGMA cache_size = -KiB`` on every connection opened from now on (as the sqlite engine)."""
        kib = max(64, cache_bytes // 1024)
        self._settings["cache_size"] = f"-{kib}"
        return {"cache_size": f"-{kib}", "cache_bytes": kib * 1024,
                "os_page_cache": "not bounded (the cipher decrypts on every miss of SQLite's own cache)"}

    def catalog_sizes(self, tables: list[str]) -> dict[str, dict[str, int]]:  # type: ignore[override]
        """Per-table pages from this library's own dbstat (it has the key, so encrypted files are sized too)."""
        out = {t: {"rows": 0, "table_bytes": 0, "index_bytes": 0, "total_bytes": 0} for t in tables}
        conn = self.connect_path(self.path)
        try:
            rows = conn.raw.execute("SELECT m.type, m.tbl_name, SUM(s.pgsize) FROM dbstat s JOIN sqlite_master m "
                                    "ON m.name = s.name GROUP BY s.name").fetchall()
            for kind, table, size in rows:
                if table in out:
                    out[table]["index_bytes" if kind == "index" else "table_bytes"] += int(size)
                    out[table]["total_bytes"] += int(size)
            for table in tables:
                out[table]["rows"] = int(conn.raw.execute(f"SELECT COUNT(*) FROM {table}").fetchall()[0][0])
        finally:
            conn.close()
        return out

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self._settings)
        if self.image is not None:
            out.update(self.image.facts())
        if self._cipher is not None:
            conn = self.connect_path(self.path)
            try:
                out["cipher"] = self._cipher[3]
                out["sqlite3mc_cipher"] = conn.raw.execute("PRAGMA cipher").fetchall()[0][0]
                if self._cipher[0] == "aegis":
                    out["aegis_algorithm"] = conn.raw.execute("PRAGMA algorithm").fetchall()[0][0]
                out["kdf"] = "none (raw key)"
            finally:
                conn.close()
        return out

    def encryption_status(self) -> dict[str, Any]:
        with open(self.path, "rb") as handle:
            header = handle.read(16)
        plain_header = header == PLAIN_HEADER
        status: dict[str, Any] = {"enabled": not plain_header, "file_header_plaintext": plain_header}
        if self.image is not None:
            fs_status = self.image.status()
            status["filesystem"] = fs_status
            if fscrypt.is_fscrypt_spec(self.config.spec):
                status["enabled"] = bool(fs_status["enabled"] and self.path.is_relative_to(self.image.data_dir))
        if self._cipher is not None:
            conn = self.connect_path(self.path)
            try:
                status["cipher"] = conn.raw.execute("PRAGMA cipher").fetchall()[0][0]
                status["version"] = conn.raw.execute("SELECT sqlite3mc_version()").fetchall()[0][0]
            finally:
                conn.close()
        return status

    def check_encrypted(self, schema_tables: list[str]) -> None:
        status = self.encryption_status()
        if self.encrypted and not status["enabled"]:
            raise RunFailed(f"{self.config.label}: the database file starts with the plaintext SQLite header",
                            "SQLite3MC did not encrypt the file; check the apsw-sqlite3mc installation")
        if fscrypt.is_fscrypt_spec(self.config.spec) and not status["enabled"]:
            raise RunFailed(f"{self.config.label}: the database is not in an unlocked fscrypt directory",
                            "check that the ext4 image is mounted")

    def flush_to_disk(self) -> None:
        if self._settings["journal_mode"] == "wal":
            conn = self.connect_path(self.path)
            try:
                conn.raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            finally:
                conn.close()
        if self.image is not None:  # what the filesystem holds, into the image's blocks
            self.image.sync()
