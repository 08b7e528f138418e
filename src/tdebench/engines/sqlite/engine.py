"""SQLite (plain), SQLCipher 4 (page-level AES-256-CBC) and ext4 fscrypt (``fs:fscrypt``) as one embedded engine.

Both twins use the same library, ``sqlcipher3`` (SQLCipher 4 on SQLite 3.x), so they differ only
in encryption: without ``PRAGMA key`` SQLCipher is plain SQLite. The encrypted twin gets a fresh
random 256-bit raw key (64 hex digits, so no PBKDF2 on every open) that lives only in memory.

``fs:fscrypt`` keeps the plain database file in an encrypted directory of a loop-mounted ext4 image
(:mod:`tdebench.engines.toolkit.fscrypt`); every twin of such a run lives on an image of its own
(``storage=ext4-loop``), so the plain twin differs by the encryption policy only. The file's lifecycle and the
threat-model answers of a library without a server are :mod:`tdebench.engines.toolkit.filedb`'s; settings, bulk
load, temporary files and the spill probe are :mod:`tdebench.engines.toolkit.sqlitefile`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlcipher3

from tdebench.api.dialect import SQLITE
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.footprint import MIB, Footprint
from tdebench.api.keys import KeyPath
from tdebench.api.switcher import Switcher
from tdebench.api.tables import TableSpec
from tdebench.encryption import PLAIN, EncryptionSpec, SecretKey, parse_spec
from tdebench.engines.sqlite import counters as sqlite_counters
from tdebench.engines.sqlite.switch import SqlcipherSwitcher
from tdebench.engines.toolkit import fscrypt, sqlitefile
from tdebench.engines.toolkit.filedb import FileDatabase, FileEngine
from tdebench.errors import EnvironmentProblem

SQLCIPHER = parse_spec("sqlcipher:aes-256-cbc")
# settings a user may change with --server-setting; identical for both twins
_DEFAULTS = {"page_size": sqlitefile.DEFAULTS["page_size"], "cipher_use_hmac": "on", **sqlitefile.DEFAULTS}
_CHOICES = {"cipher_use_hmac": ("on", "off"), **sqlitefile.CHOICES}


class SqliteEngine(FileEngine, Engine):
    """Embedded SQLite/SQLCipher."""

    name = "sqlite"
    dialect = SQLITE
    description = "SQLite 3 file, plain or SQLCipher 4 (AES-256-CBC + HMAC-SHA512 per page)"
    cache_type = sqlitefile.SqliteCache
    switcher_types = (SqlcipherSwitcher,)  # offline: sqlcipher_export into a new file, PRAGMA rekey

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, SQLCIPHER, *self.file_specs()]

    def key_path(self, spec: EncryptionSpec) -> KeyPath | None:
        if spec == SQLCIPHER:
            return self.library_key_path(256, "SQLCipher raw key (AES-256)", "with PRAGMA key")
        return super().key_path(spec)

    def default_encrypted_spec(self) -> EncryptionSpec:
        return SQLCIPHER

    def check_available(self) -> None:
        try:
            sqlcipher3.connect(":memory:").close()
        except Exception as exc:  # noqa: BLE001
            raise EnvironmentProblem(f"sqlcipher3 does not work: {exc}", "pip install sqlcipher3-binary") from exc

    def version(self) -> str:
        conn = sqlcipher3.connect(":memory:")
        try:
            cipher = conn.execute("PRAGMA cipher_version").fetchone()[0]
            return f"SQLite {sqlcipher3.sqlite_version}, SQLCipher {cipher}"
        finally:
            conn.close()

    def default_settings(self) -> dict[str, str]:
        return dict(_DEFAULTS)

    def validate_settings(self, settings: dict[str, str]) -> None:
        sqlitefile.validate(self.name, self.library_settings(settings), _DEFAULTS, _CHOICES)

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "SqliteInstance":
        return SqliteInstance(config, workdir, database)

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        fixed = 16 * MIB + self.image_overhead(spec, settings)
        return Footprint(peak=1.7, final=1.7 if spec == SQLCIPHER else 1.6, fixed=fixed)


class SqlcipherThreats(sqlitefile.SqliteThreats):
    """SQLite's threat-model probes, and where SQLCipher's raw key lives."""

    def library_keys(self) -> list[dict[str, Any]]:
        key = self.instance._key
        return [] if key is None else [self.key_row(key, "SQLCipher raw key (AES-256)", "PRAGMA key on every open")]


class SqliteInstance(sqlitefile.SqliteFile, FileDatabase, Instance):
    """One database file in its own 0700 directory (:mod:`tdebench.engines.toolkit.filedb`)."""

    dialect = SQLITE
    cipher_fix = "SQLCipher did not encrypt the file; check the sqlcipher3 installation"

    def __init__(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self._settings = {**_DEFAULTS, **{k: v.lower() for k, v in config.settings.items()
                                          if k != fscrypt.STORAGE_KEY}}
        self.place_file(config, workdir, f"{database}.db")
        self._key = SecretKey.generate(256) if config.spec == SQLCIPHER else None
        self._active = self._key  # the key the file is under now (None: plaintext; see SqlcipherSwitcher)
        self._switcher = SqlcipherSwitcher(self) if self._key is not None else None
        self._pages = sqlite_counters.PageCounts()  # every connection to the database file reports here

    @property
    def encrypted(self) -> bool:
        """SQLCipher encrypts the pages (fscrypt's encryption is the kernel's: the file is plain SQLite)."""
        return self._active is not None

    def switcher(self) -> Switcher[Any] | None:
        """SQLCipher's offline switch (``sqlcipher:aes-256-cbc``), None for the other specs."""
        return self._switcher

    def threats(self) -> SqlcipherThreats:
        return SqlcipherThreats(self)

    def connect(self) -> Connection:
        return self.connect_path(self.path)

    def connect_path(self, path: Path) -> Connection:
        """A connection to ``path`` with this instance's key and settings (backups into a second file)."""
        counts = self._pages if Path(path) == self.path else None
        conn = sqlite_counters.connect(str(path), counts, check_same_thread=False, isolation_level=None)
        s = self._settings
        key = self.open_key(self._active)
        if key is not None:
            # raw key: x'<64 hex>' skips PBKDF2; must be the first statement on the connection
            conn.execute(f"PRAGMA key = \"x'{key.hex()}'\"")
            conn.execute(f"PRAGMA cipher_page_size = {int(s['page_size'])}")
            conn.execute(f"PRAGMA cipher_use_hmac = {s['cipher_use_hmac'].upper()}")
        else:
            conn.execute(f"PRAGMA page_size = {int(s['page_size'])}")
        conn.execute(f"PRAGMA cache_size = {int(s['cache_size'])}")
        conn.execute(f"PRAGMA journal_mode = {s['journal_mode'].upper()}")
        conn.execute(f"PRAGMA synchronous = {s['synchronous'].upper()}")
        conn.execute(f"PRAGMA temp_store = {s['temp_store'].upper()}")
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("PRAGMA busy_timeout = 600000")  # throughput test: readers wait for the refresh stream
        return conn

    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        return sqlitefile.load_file(conn, table, path)

    def analyze(self, conn: Connection) -> None:
        conn.cursor().execute("ANALYZE")

    def counters(self) -> dict[str, float]:
        """Page-cache counts of every connection to the database file (``sqlite3_db_status``, see
        :mod:`tdebench.engines.sqlite.counters`): each miss reads a page from the file, which SQLCipher decrypts
        and authenticates; each page written is encrypted and MACed. Plus the read()/write() bytes of tdebench's
        process and its children (the embedded engine's file IO, cached by the OS or not, and little else)."""
        page = int(self._settings["page_size"])
        rchar, wchar = sqlite_counters.process_io()
        out: dict[str, float] = {"page_size": page, "bytes_read": rchar, "bytes_written": wchar}
        if sqlite_counters.usable():
            return fscrypt.image_counters(self.image, out)
        t = self._pages.totals()
        out.update(cache_requests=t.hits + t.misses, cache_misses=t.misses, pages_read=t.misses,
                   pages_written=t.writes,
                   bytes_decrypted=t.misses * page if self.encrypted else 0,
                   bytes_encrypted=t.writes * page if self.encrypted else 0)
        return fscrypt.image_counters(self.image, out)

    def cache(self) -> sqlitefile.SqliteCache:
        return sqlitefile.SqliteCache(self)

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self._settings)
        out.update(self.image_facts())
        if not self.encrypted:
            out.pop("cipher_use_hmac", None)
        else:
            out.update(cipher="AES-256-CBC", kdf="none (raw 256-bit key)", hmac="HMAC-SHA512" if self._settings["cipher_use_hmac"] == "on" else "off")
        return out

    def encryption_status(self) -> dict[str, Any]:
        status = self.add_filesystem_status(self.header_status())
        if self.encrypted:
            conn = self.connect()
            try:
                status["cipher_version"] = conn.execute("PRAGMA cipher_version").fetchone()[0]
                status["cipher_settings"] = [r[0] for r in conn.execute("PRAGMA cipher_settings").fetchall()
                                             if not str(r[0]).lower().startswith("pragma key")]
            finally:
                conn.close()
        return status
