"""SQLite3 Multiple Ciphers as an engine of its own: plain SQLite 3.54 and its page ciphers, one library.

Both twins open their file with ``apsw-sqlite3mc`` (SQLite 3.54, SQLite3MC 2.6); without a key it is plain
SQLite, so twins differ only in the cipher. The sqlite engine's twins use ``sqlcipher3`` (an older SQLite):
comparing a SQLite3MC cipher with that plain twin would mix the library version into the cost, hence an engine
of its own (docs/engines/sqlite3mc.md). The encrypted twin gets a fresh random raw key (``PRAGMA key =
"x'<hex>'"``: no passphrase derivation on every open) that lives only in memory. ``fs:fscrypt`` keeps the plain
file in an fscrypt directory of a loop-mounted ext4 image, as the sqlite engine does (toolkit/fscrypt). The file's
lifecycle and the threat-model answers of a library without a server are :mod:`tdebench.engines.toolkit.filedb`'s;
settings, bulk load, temporary files and the spill probe are :mod:`tdebench.engines.toolkit.sqlitefile`'s (this
build keeps temporary data in memory unless ``temp_store`` is ``file``; where a file is written, SQLite3MC
encrypts it with the database's cipher, as tests/engines/test_sqlite3mc.py reads).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import apsw

from tdebench.api.dialect import SQLITE
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.footprint import MIB, Footprint
from tdebench.api.keys import KeyPath
from tdebench.api.tables import TableSpec
from tdebench.encryption import PLAIN, EncryptionSpec, SecretKey, parse_spec
from tdebench.engines.sqlite3mc import counters
from tdebench.engines.sqlite3mc.connection import McConnection
from tdebench.engines.toolkit import fscrypt, sqlitefile
from tdebench.engines.toolkit.filedb import FileDatabase, FileEngine
from tdebench.errors import EnvironmentProblem

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
DIALECT = dataclasses.replace(SQLITE, product="SQLite3 Multiple Ciphers", backup_tools=())


class McCache(sqlitefile.SqliteCache):
    """SQLite's page cache, sized as the sqlite engine's; this library's cipher decrypts each miss."""

    cipher = "the cipher"


class Sqlite3mcEngine(FileEngine, Engine):
    """Embedded SQLite3 Multiple Ciphers."""

    name = "sqlite3mc"
    dialect = DIALECT
    description = ("SQLite 3.54 file via SQLite3 Multiple Ciphers: plain, ChaCha20-Poly1305, AES-128/256-CBC, "
                   "SQLCipher 4, Ascon-128 or AEGIS per page")
    cache_type = McCache

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, *SPECS, *self.file_specs()]

    def key_path(self, spec: EncryptionSpec) -> KeyPath | None:
        cipher = CIPHERS.get(spec.cipher) if spec in SPECS else None
        if cipher is not None:
            return self.library_key_path(cipher[2] * 8, f"SQLite3MC raw key ({cipher[3]})", "with PRAGMA key")
        return super().key_path(spec)

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
        return dict(sqlitefile.DEFAULTS)

    def validate_settings(self, settings: dict[str, str]) -> None:
        sqlitefile.validate(self.name, self.library_settings(settings))

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "McInstance":
        return McInstance(config, workdir, database)

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        return Footprint(peak=1.7, final=1.7, fixed=16 * MIB + self.image_overhead(spec, settings))


class McThreats(sqlitefile.SqliteThreats):
    """SQLite's threat-model probes, and where SQLite3MC's raw key lives."""

    def library_keys(self) -> list[dict[str, Any]]:
        key = self.instance._key
        return [] if key is None else [self.key_row(key, f"SQLite3MC raw key ({key.bits} bits)",
                                                    "PRAGMA key on every open")]


class McInstance(sqlitefile.SqliteFile, FileDatabase, Instance):
    """One database file in its own 0700 directory (:mod:`tdebench.engines.toolkit.filedb`)."""

    dialect = DIALECT
    cipher_fix = "SQLite3MC did not encrypt the file; check the apsw-sqlite3mc installation"

    def __init__(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self._settings = {**sqlitefile.DEFAULTS, **{k: v.lower() for k, v in config.settings.items()
                                                    if k != fscrypt.STORAGE_KEY}}
        self.place_file(config, workdir, f"{database}.db")
        self._cipher = CIPHERS.get(config.spec.cipher) if not config.spec.is_plain else None
        self._key = SecretKey.generate(self._cipher[2] * 8) if self._cipher else None
        self._pages = counters.PageCounts()

    @property
    def encrypted(self) -> bool:
        return self._key is not None

    def threats(self) -> McThreats:
        return McThreats(self)

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
            key = self.open_key(self._key)
            assert key is not None
            raw.execute(f"PRAGMA key = \"x'{key.hex()}'\"").fetchall()
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
        return sqlitefile.load_file(conn, table, path)

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

    def cache(self) -> McCache:
        return McCache(self)

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
        out.update(self.image_facts())
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
        status = self.add_filesystem_status(self.header_status())
        if self._cipher is not None:
            conn = self.connect_path(self.path)
            try:
                status["cipher"] = conn.raw.execute("PRAGMA cipher").fetchall()[0][0]
                status["version"] = conn.raw.execute("SELECT sqlite3mc_version()").fetchall()[0][0]
            finally:
                conn.close()
        return status
