"""What the engines built on a SQLite library share (one file format, the same PRAGMAs and temporary files,
whichever library and cipher): the settings users may change, the bulk load of a data file, :class:`SqliteFile`
(the file header, the WAL checkpoint, the database file a backup copies) and :class:`SqliteThreats` (where
temporary files go, with the spill probe that holds one open: docs/security.md).

Connections here are DB-API-like (:class:`tdebench.api.engine.Connection` with ``execute`` on the connection),
as ``sqlite3``/``sqlcipher3`` connections are and the engines' own wrappers give.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from tdebench.api.cache import Cache
from tdebench.api.canary import CANARY_TABLE
from tdebench.api.engine import Config, Connection
from tdebench.api.server import DatabaseFile
from tdebench.api.tables import ColumnSpec, TableSpec, split_line
from tdebench.engines.toolkit.filedb import FileThreats
from tdebench.errors import RunFailed, UsageError

#: settings a user may change with --server-setting, and SQLite's values for them (identical for both twins)
DEFAULTS = {"page_size": "4096", "cache_size": "-2000", "journal_mode": "delete", "synchronous": "full",
            "temp_store": "default"}
CHOICES = {"journal_mode": ("delete", "wal", "truncate", "memory", "off"),
           "synchronous": ("off", "normal", "full", "extra"), "temp_store": ("default", "file", "memory")}
SPILL_COPIES = 20_000
PLAIN_HEADER = b"SQLite format 3\x00"
_BATCH = 20_000
_NUMBERS: dict[str, Callable[[str], Any]] = {"int": int, "bigint": int, "bool": int, "decimal": float,
                                              "float": float}


def validate(engine: str, settings: dict[str, str], defaults: dict[str, str] = DEFAULTS,
             choices: dict[str, tuple[str, ...]] = CHOICES) -> None:
    """UsageError naming the first setting or value ``engine`` does not take (of ``defaults``, within
    ``choices``; sizes are integers, the page size a power of two)."""
    for key, value in settings.items():
        if key not in defaults:
            raise UsageError(f"unknown {engine} setting '{key}'", f"use one of: {', '.join(defaults)}")
        allowed = choices.get(key)
        if allowed and value.lower() not in allowed:
            raise UsageError(f"bad value '{value}' for {engine} setting {key}", f"use one of: {', '.join(allowed)}")
        if key in ("page_size", "cache_size") and not value.lstrip("-").isdigit():
            raise UsageError(f"bad value '{value}' for {engine} setting {key}", "give an integer")
    size = int(settings.get("page_size", defaults["page_size"]))
    if size < 512 or size > 65536 or size & (size - 1):
        raise UsageError(f"bad page_size {size}", "use a power of two from 512 to 65536")


def converter(column: ColumnSpec) -> Callable[[str | None], Any]:
    """Data-file text -> the value SQLite stores: integers, REAL for decimals, text for the rest (NULL stays)."""
    number = _NUMBERS.get(column.kind)
    if number is None:
        return lambda text: text

    def convert(text: str | None) -> Any:
        return None if text is None or text == "" else number(text)
    return convert


def load_file(conn: Connection, table: TableSpec, path: Path) -> int:
    """Rows of the data file ``path`` inserted into ``table`` (``executemany`` in one transaction); how many.
    Values as :func:`converter` makes them; only the number columns are touched (most are text)."""
    width = len(table.columns)
    numbers = [(i, _NUMBERS[c.kind]) for i, c in enumerate(table.columns) if c.kind in _NUMBERS]
    sql = (f"INSERT INTO {table.name} ({', '.join(table.column_names)}) "
           f"VALUES ({', '.join('?' for _ in range(width))})")
    cur = conn.cursor()
    rows = 0
    cur.execute("BEGIN")
    with open(path, newline="", encoding="utf-8") as handle:
        batch: list[list[Any]] = []
        for line in handle:
            fields: list[Any] = split_line(line.rstrip("\n"))
            del fields[width:]
            for i, number in numbers:
                fields[i] = number(fields[i]) if fields[i] else None  # "" and NULL: NULL
            batch.append(fields)
            if len(batch) >= _BATCH:
                cur.executemany(sql, batch)
                rows += len(batch)
                batch = []
        if batch:
            cur.executemany(sql, batch)
            rows += len(batch)
    cur.execute("COMMIT")
    return rows


def sqlite_temp_dir() -> Path:
    """Where SQLite (unix VFS) puts temporary files: the first writable of its candidate directories."""
    for candidate in (os.environ.get("SQLITE_TMPDIR"), os.environ.get("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp"):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK | os.X_OK):
            return Path(candidate)
    return Path(".")


def temp_in_memory(compile_options: list[str], pragma: int) -> bool:
    """True when temporary data stays in memory: SQLITE_TEMP_STORE (0-3) combined with PRAGMA temp_store (0-2)."""
    build = next((int(o.split("=")[1]) for o in compile_options if o.startswith("TEMP_STORE=")), 1)
    return build == 3 or (build == 2 and pragma != 1) or (build == 1 and pragma == 2)


class SqliteCache(Cache):
    """SQLite's own page cache (per connection), sized by ``PRAGMA cache_size = -KiB`` on every connection the
    instance opens from now on (the workloads open theirs per trial). The OS page cache is left alone: the cipher
    decrypts every page SQLite's own cache misses, whether the OS cached the file or not."""

    setting = "cache_size"
    page_sources = ("memory",)  # it reads through the OS page cache, and decrypts every miss of its own cache
    #: who decrypts each miss (the manifest's ``os_page_cache`` says so)
    cipher: ClassVar[str] = "SQLCipher"

    @classmethod
    def configured_bytes(cls, settings: dict[str, Any]) -> int | None:
        """``cache_size``: a negative value is KiB, a positive one pages of ``page_size`` bytes."""
        value, page = (str(settings.get(k, "")) for k in ("cache_size", "page_size"))
        if not value.lstrip("-").isdigit():
            return None
        if value.startswith("-"):
            return int(value[1:]) * 1024 or None
        return int(value) * int(page) if page.isdigit() and int(value) else None

    def resize(self, cache_bytes: int, page_source: str = "") -> dict[str, Any]:
        kib = max(64, cache_bytes // 1024)
        self.instance._settings["cache_size"] = f"-{kib}"
        return {"cache_size": f"-{kib}", "cache_bytes": kib * 1024,
                "os_page_cache": f"not bounded ({self.cipher} decrypts on every miss of SQLite's own cache)"}


class SqliteFile:
    """Mixed into the instance of an engine on a SQLite library, before
    :class:`~tdebench.engines.toolkit.filedb.FileDatabase` (the instance gives ``encrypted``, ``connect``,
    ``connect_path``, ``encryption_status`` and ``_settings``): the file header as the first word on encryption,
    the WAL checkpoint before a scan, and the database file a backup copies."""

    #: what to check when an encrypted twin's file starts with the plaintext header
    cipher_fix = "check the library's installation"
    path: Path
    config: Config
    encrypted: bool
    _settings: dict[str, str]
    connect: Callable[[], Any]
    #: a connection to another database file with the instance's key and settings
    connect_path: Callable[[Path], Connection]
    encryption_status: Callable[[], dict[str, Any]]
    check_filesystem: Callable[[dict[str, Any]], None]  # FileDatabase's (toolkit/filedb)
    sync_image: Callable[[], None]

    def header_status(self) -> dict[str, Any]:
        """``enabled`` unless the file starts with SQLite's plaintext header (a page cipher replaces it)."""
        with open(self.path, "rb") as handle:
            plain = handle.read(16) == PLAIN_HEADER
        return {"enabled": not plain, "file_header_plaintext": plain}

    def check_encrypted(self, schema_tables: list[str]) -> None:
        """RunFailed when an encrypted twin's file still starts with the plaintext header (``cipher_fix`` says
        what to check), or an fscrypt twin's file is not in the unlocked directory."""
        status = self.encryption_status()
        if self.encrypted and not status["enabled"]:
            raise RunFailed(f"{self.config.label}: the database file starts with the plaintext SQLite header",
                            self.cipher_fix)
        self.check_filesystem(status)

    def flush_to_disk(self) -> None:
        """In WAL mode, the WAL written back into the database file; then the ext4 image's blocks (before an
        at-rest scan)."""
        if self._settings["journal_mode"] == "wal":
            conn = self.connect()
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            finally:
                conn.close()
        self.sync_image()

    def database_file(self) -> DatabaseFile:
        """The database file, and a second one opened the same way (the backup API's target)."""
        return DatabaseFile(self.path, self.connect_path)


class SqliteThreats(FileThreats):
    """The threat-model probes of a database file of a SQLite library (an engine adds its key's row in
    :meth:`~tdebench.engines.toolkit.filedb.FileThreats.library_keys`). Temporary files go to
    :func:`sqlite_temp_dir`, are unlinked as soon as they are opened and exist only while the statement needs them:
    the spill probe holds one open and the scan reads it through ``/proc/self/fd``. Whether they are written at all
    depends on the build's ``SQLITE_TEMP_STORE`` and ``PRAGMA temp_store`` (the ``temp_store`` setting)."""

    library = "SQLite"
    file_parts = {"redo": ["*-journal", "*-wal"]}

    def temp_locations(self) -> list[Path]:
        return [sqlite_temp_dir()]

    @contextlib.contextmanager
    def spill_probe(self, markers: list[str]) -> Iterator[dict[str, Any]]:
        """A sort of the canary rows × 20,000 with a 16-page cache, held open after its first row."""
        conn = self.instance.connect()
        try:
            options = [str(r[0]) for r in conn.execute("PRAGMA compile_options").fetchall()]
            pragma = int(conn.execute("PRAGMA temp_store").fetchall()[0][0])
            setting = {"temp_store": self.instance._settings.get("temp_store", "default"),
                       "build": next((o for o in options if o.startswith("TEMP_STORE=")), "TEMP_STORE=1")}
            if temp_in_memory(options, pragma):
                yield {"in_memory": f"temporary data stays in memory here ({setting['build']}, temp_store="
                                    f"{setting['temp_store']}): no temporary file is written", "settings": setting}
                return
            conn.execute("PRAGMA cache_size = 16").fetchall()
            query = (f"WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {SPILL_COPIES}) "
                     f"SELECT c.marker || '-' || g.i AS v, hex(randomblob(20)) FROM {CANARY_TABLE} c, g "
                     "ORDER BY v DESC")
            cur = conn.cursor()
            cur.execute(query)
            cur.fetchone()
            yield {"query": query.replace(CANARY_TABLE, "<canary table>"),
                   "settings": {**setting, "cache_size": "16 pages"}, "held_open": "cursor after its first row"}
        finally:
            conn.close()


__all__ = ["CHOICES", "DEFAULTS", "PLAIN_HEADER", "SqliteFile", "SqliteThreats", "converter", "load_file",
           "sqlite_temp_dir", "temp_in_memory", "validate"]
