"""SQLite (plain), SQLCipher 4 (page-level AES-256-CBC) and ext4 fscrypt (``fs:fscrypt``) as one embedded engine.

Both twins use the same library, ``sqlcipher3`` (SQLCipher 4 on SQLite 3.x), so they differ only
in encryption: without ``PRAGMA key`` SQLCipher is plain SQLite. The encrypted twin gets a fresh
random 256-bit raw key (64 hex digits, so no PBKDF2 on every open) that lives only in memory.

``fs:fscrypt`` keeps the plain database file in an encrypted directory of a loop-mounted ext4 image
(:mod:`tdebench.engines.toolkit.fscrypt`); every twin of such a run lives on an image of its own
(``storage=ext4-loop``), so the plain twin differs by the encryption policy only.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import sqlcipher3

from tdebench.api.dialect import SQLITE
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.footprint import MIB, Footprint
from tdebench.api.tables import ColumnSpec, TableSpec, split_line
from tdebench.encryption import PLAIN, EncryptionSpec, SecretKey, parse_spec
from tdebench.engines.sqlite import counters as sqlite_counters
from tdebench.engines.sqlite.switch import SqlcipherSwitch
from tdebench.engines.sqlite.threats import SqliteThreatProbes
from tdebench.engines.toolkit import fscrypt
from tdebench.errors import EnvironmentProblem, RunFailed, UsageError

SQLCIPHER = parse_spec("sqlcipher:aes-256-cbc")
# settings a user may change with --server-setting; identical for both twins
_DEFAULTS = {"page_size": "4096", "cipher_use_hmac": "on", "cache_size": "-2000", "journal_mode": "delete",
             "synchronous": "full", "temp_store": "default"}
_CHOICES = {"cipher_use_hmac": ("on", "off"), "journal_mode": ("delete", "wal", "truncate", "memory", "off"),
            "synchronous": ("off", "normal", "full", "extra"), "temp_store": ("default", "file", "memory")}
_LOAD_BATCH = 20_000


_NUMBERS: dict[str, Callable[[str], Any]] = {"int": int, "bigint": int, "bool": int, "decimal": float,
                                              "float": float}


def _converter(column: ColumnSpec) -> Callable[[str | None], Any]:
    """Data-file text -> the value SQLite stores: integers, REAL for decimals, text for the rest (NULL stays)."""
    number = _NUMBERS.get(column.kind)
    if number is None:
        return lambda text: text

    def convert(text: str | None) -> Any:
        return None if text is None or text == "" else number(text)
    return convert


class SqliteEngine(Engine):
    """Embedded SQLite/SQLCipher."""

    name = "sqlite"
    dialect = SQLITE
    description = "SQLite 3 file, plain or SQLCipher 4 (AES-256-CBC + HMAC-SHA512 per page)"
    cache_setting = "cache_size"
    offline_switch = ("ATTACH ... KEY + SELECT sqlcipher_export(): a copy encrypted page by page replaces the file "
                      "(no connection meanwhile)")
    rekey_method = "PRAGMA rekey: every page re-encrypted in place in one transaction (no connection meanwhile)"

    def can_switch(self, spec: EncryptionSpec) -> bool:
        return spec == SQLCIPHER

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, SQLCIPHER, *fscrypt.fs_specs()]

    def default_encrypted_spec(self) -> EncryptionSpec:
        return SQLCIPHER

    def check_available(self) -> None:
        try:
            sqlcipher3.connect(":memory:").close()
        except Exception as exc:  # noqa: BLE001
            raise EnvironmentProblem(f"sqlcipher3 does not work: {exc}", "pip install sqlcipher3-binary") from exc

    def check_spec_available(self, spec: EncryptionSpec) -> None:
        if fscrypt.is_fscrypt_spec(spec):
            fscrypt.check_available(spec)

    def plan_settings(self, specs: Sequence[EncryptionSpec]) -> dict[str, str]:
        return fscrypt.plan_settings(list(specs))

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
        fscrypt.validate_storage(settings)
        if fscrypt.on_loop_image(PLAIN, settings):
            fscrypt.check_available()
        for key, value in settings.items():
            if key == fscrypt.STORAGE_KEY:
                continue
            if key not in _DEFAULTS:
                raise UsageError(f"unknown sqlite setting '{key}'", f"use one of: {', '.join(_DEFAULTS)}")
            allowed = _CHOICES.get(key)
            if allowed and value.lower() not in allowed:
                raise UsageError(f"bad value '{value}' for sqlite setting {key}", f"use one of: {', '.join(allowed)}")
            if key in ("page_size", "cache_size") and not value.lstrip("-").isdigit():
                raise UsageError(f"bad value '{value}' for sqlite setting {key}", "give an integer")
        size = int(settings.get("page_size", _DEFAULTS["page_size"]))
        if size < 512 or size > 65536 or size & (size - 1):
            raise UsageError(f"bad page_size {size}", "use a power of two from 512 to 65536")

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "SqliteInstance":
        return SqliteInstance(config, workdir, database)

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        fixed = 16 * MIB + (fscrypt.EXT4_OVERHEAD if fscrypt.on_loop_image(spec, settings) else 0)
        return Footprint(peak=1.7, final=1.7 if spec == SQLCIPHER else 1.6, fixed=fixed)


class SqliteInstance(SqlcipherSwitch, SqliteThreatProbes, Instance):
    """One database file in its own 0700 directory."""

    dialect = SQLITE

    def __init__(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self._settings = {**_DEFAULTS, **{k: v.lower() for k, v in config.settings.items()
                                          if k != fscrypt.STORAGE_KEY}}
        self._home = workdir / config.label
        self.image = (fscrypt.Ext4Image(config.spec, self._home / "fs")
                      if fscrypt.on_loop_image(config.spec, config.settings) else None)
        self._dir = self.image.data_dir if self.image is not None else self._home
        self.path = self._dir / f"{database}.db"
        self._key = SecretKey.generate(256) if config.spec == SQLCIPHER else None
        self._active = self._key  # the key the file is under now (None: plaintext; see start_plain)
        self._pages = sqlite_counters.PageCounts()  # every connection to the database file reports here

    @property
    def encrypted(self) -> bool:
        """SQLCipher encrypts the pages (fscrypt's encryption is the kernel's: the file is plain SQLite)."""
        return self._active is not None

    @property
    def data_dir(self) -> Path:
        """What is on disk: the database's directory, or the ext4 image holding it (scanned as raw blocks)."""
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
            if self.config.keep:
                return
        shutil.rmtree(self._home, ignore_errors=True)

    def storage_bytes(self) -> int:
        """Bytes of the database's files (on an ext4 image: as the mount shows them, like the plain twin's)."""
        return sum(p.stat().st_size for p in self._dir.rglob("*") if p.is_file())

    def connect(self) -> Connection:
        return self.connect_path(self.path)

    def connect_path(self, path: Path) -> Connection:
        """A connection to ``path`` with this instance's key and settings (backups into a second file)."""
        counts = self._pages if Path(path) == self.path else None
        conn = sqlite_counters.connect(str(path), counts, check_same_thread=False, isolation_level=None)
        s = self._settings
        if self._active is not None:
            # raw key: x'<64 hex>' skips PBKDF2; must be the first statement on the connection
            conn.execute(f"PRAGMA key = \"x'{self._active.hex()}'\"")
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
        converters = [_converter(c) for c in table.columns]
        placeholders = ", ".join("?" for _ in converters)
        sql = f"INSERT INTO {table.name} ({', '.join(table.column_names)}) VALUES ({placeholders})"
        cur = conn.cursor()
        rows = 0
        cur.execute("BEGIN")
        with open(path, newline="", encoding="utf-8") as handle:
            batch: list[list[Any]] = []
            for line in handle:
                fields = split_line(line.rstrip("\n"))
                batch.append([conv(v) for conv, v in zip(converters, fields)])
                if len(batch) >= _LOAD_BATCH:
                    cur.executemany(sql, batch)
                    rows += len(batch)
                    batch.clear()
            if batch:
                cur.executemany(sql, batch)
                rows += len(batch)
        cur.execute("COMMIT")
        return rows

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
            return out
        t = self._pages.totals()
        out.update(cache_requests=t.hits + t.misses, cache_misses=t.misses, pages_read=t.misses,
                   pages_written=t.writes,
                   bytes_decrypted=t.misses * page if self.encrypted else 0,
                   bytes_encrypted=t.writes * page if self.encrypted else 0)
        return out

    def resize_cache(self, cache_bytes: int) -> dict[str, Any]:
        """``PRAGMA cache_size = -KiB`` on every connection opened from now on (SQLite's cache is per connection;
        the workloads open theirs per trial). The OS page cache is left alone: SQLCipher decrypts every page
        SQLite's own cache misses, whether the OS cached the file or not."""
        kib = max(64, cache_bytes // 1024)
        self._settings["cache_size"] = f"-{kib}"
        return {"cache_size": f"-{kib}", "cache_bytes": kib * 1024,
                "os_page_cache": "not bounded (SQLCipher decrypts on every miss of SQLite's own cache)"}

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self._settings)
        if self.image is not None:
            out.update(self.image.facts())
        if not self.encrypted:
            out.pop("cipher_use_hmac", None)
        else:
            out.update(cipher="AES-256-CBC", kdf="none (raw 256-bit key)", hmac="HMAC-SHA512" if self._settings["cipher_use_hmac"] == "on" else "off")
        return out

    def encryption_status(self) -> dict[str, Any]:
        with open(self.path, "rb") as handle:
            header = handle.read(16)
        plain_header = header == b"SQLite format 3\x00"
        status: dict[str, Any] = {"enabled": not plain_header, "file_header_plaintext": plain_header}
        if self.image is not None:
            fs_status = self.image.status()
            status.update(filesystem=fs_status)
            if fscrypt.is_fscrypt_spec(self.config.spec):
                status["enabled"] = bool(fs_status["enabled"] and self.path.is_relative_to(self.image.data_dir))
        if self.encrypted:
            conn = self.connect()
            try:
                status["cipher_version"] = conn.execute("PRAGMA cipher_version").fetchone()[0]
                status["cipher_settings"] = [r[0] for r in conn.execute("PRAGMA cipher_settings").fetchall()
                                             if not str(r[0]).lower().startswith("pragma key")]
            finally:
                conn.close()
        return status

    def check_encrypted(self, schema_tables: list[str]) -> None:
        status = self.encryption_status()
        if self.encrypted and not status["enabled"]:
            raise RunFailed(f"{self.config.label}: the database file starts with the plaintext SQLite header",
                            "SQLCipher did not encrypt the file; check the sqlcipher3 installation")
        if fscrypt.is_fscrypt_spec(self.config.spec) and not status["enabled"]:
            raise RunFailed(f"{self.config.label}: the database is not in an unlocked fscrypt directory "
                            f"({status['filesystem']})", "check that the ext4 image is mounted")

    def flush_to_disk(self) -> None:
        conn = self.connect()
        try:
            if self._settings["journal_mode"] == "wal":
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        if self.image is not None:  # what the filesystem holds, into the image's blocks
            self.image.sync()
