"""libSQL: SQLite files written by libSQL (the SQLite fork of Turso), plain or encrypted at rest by the
``encryption_key`` of its connect (SQLite3 Multiple Ciphers inside libSQL, AES-256-CBC). The file's lifecycle,
paths and threat-model probes come from :mod:`tdebench.engines.toolkit.filedb`; docs/engines/libsql.md.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import metadata
from pathlib import Path
from typing import Any

from tdebench.api.dialect import SQLITE
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.server import DatabaseFile
from tdebench.api.tables import TableSpec, split_line
from tdebench.encryption import PLAIN, EncryptionSpec, SecretKey, parse_spec
from tdebench.engines.toolkit.filedb import FileDatabase, FileThreats
from tdebench.errors import EnvironmentProblem

try:
    import libsql
except ImportError:  # check_available says how to install it
    libsql = None

#: libSQL's only cipher: SQLite3 Multiple Ciphers' AES-256-CBC (no HMAC), its key derived from the passphrase
LIBSQL_AES = parse_spec("sqlite3mc:aes-256-cbc")
INSTALL = "pip install libsql"
#: SQLite's SQL, but the driver's cursor.rowcount adds up every change of the connection so far, and its connection
#: has no ``backup`` (the SQLite backup API): VACUUM INTO (``sqlite-dump``) is the backup it offers
LIBSQL = replace(SQLITE, product="libSQL", rowcount=False, backup_tools=("sqlite-dump",))


class LibsqlEngine(Engine):
    """libSQL database files in tdebench's process; the encrypted twin under ``encryption_key``."""

    name = "libsql"
    dialect = LIBSQL  # the SQL family workloads hand its instances, and what its driver can do
    description = "libSQL file (the SQLite fork), plain or encrypted by its encryption_key (AES-256-CBC)"

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, LIBSQL_AES]

    def default_encrypted_spec(self) -> EncryptionSpec:
        return LIBSQL_AES

    def check_available(self) -> None:
        if libsql is None:
            raise EnvironmentProblem("the libSQL Python package is not installed", INSTALL)
        try:
            libsql.connect(":memory:").close()
        except Exception as exc:  # noqa: BLE001 - any failure means: not usable here
            raise EnvironmentProblem(f"libsql does not work: {exc}", INSTALL) from exc

    def version(self) -> str:
        conn = libsql.connect(":memory:")  # the module's sqlite_version_info is not the library's own
        try:
            sqlite = conn.execute("SELECT sqlite_version()").fetchone()[0]
        finally:
            conn.close()
        return f"libsql {metadata.version('libsql')} (SQLite {sqlite})"

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "LibsqlInstance":
        return LibsqlInstance(config, workdir, database)


class LibsqlInstance(FileDatabase, Instance):
    """One database file in its own directory; the encrypted twin's passphrase lives in memory only."""

    dialect = LIBSQL

    def __init__(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self.place_file(config, workdir, f"{database}.db")  # start, stop, destroy, data_dir, ... come with it
        self.key = SecretKey.generate(256) if config.spec == LIBSQL_AES else None

    def threats(self) -> "LibsqlThreats":
        return LibsqlThreats(self)

    def connect(self) -> Connection:
        return self.connect_path(self.path)

    def connect_path(self, path: Path) -> Connection:
        """A connection to ``path`` with the instance's key."""
        key = None if self.key is None else self.key.hex()
        return libsql.connect(str(path), isolation_level=None, _check_same_thread=False, encryption_key=key)

    def database_file(self) -> DatabaseFile:
        """The file the ``sqlite-dump`` backup (VACUUM INTO) restores over, opened with the instance's key."""
        return DatabaseFile(self.path, self.connect_path)

    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        numbers = {"int": int, "bigint": int, "bool": int, "decimal": float, "float": float}
        convert = [numbers.get(c.kind, str) for c in table.columns]
        sql = f"INSERT INTO {table.name} VALUES ({', '.join('?' for _ in table.columns)})"
        with open(path, encoding="utf-8") as handle:
            rows = [[None if v is None else f(v) for f, v in zip(convert, split_line(line.rstrip("\n")))]
                    for line in handle]
        conn.execute("BEGIN")
        conn.executemany(sql, rows)
        conn.execute("COMMIT")
        return len(rows)

    def encryption_status(self) -> dict[str, Any]:
        with open(self.path, "rb") as handle:
            plain = handle.read(16) == b"SQLite format 3\x00"
        return {"enabled": not plain, "file_header_plaintext": plain}


class LibsqlThreats(FileThreats):
    """The threat model's probes: FileThreats answers for any library without a server; this adds the key's row."""

    library = "libSQL"

    def library_keys(self) -> list[dict[str, Any]]:
        key = self.instance.key
        return [] if key is None else [self.key_row(key, "libSQL encryption_key passphrase (AES-256-CBC)",
                                                    "encryption_key on every connect")]
