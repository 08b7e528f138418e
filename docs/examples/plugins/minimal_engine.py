"""A minimal engine: SQLite files, plain or encrypted by SQLCipher, in the few methods an engine must have (the
file's lifecycle, paths and threat-model probes come from :mod:`tdebench.engines.toolkit.filedb`).

docs/adding-an-engine.md walks through it; the test suite runs the conformance kit on it (tests/engines), so
it keeps working. Register it with ``tdebench.engines.register("minimal", MinimalEngine)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlcipher3

from tdebench.api.dialect import SQLITE
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.server import DatabaseFile
from tdebench.api.tables import TableSpec, split_line
from tdebench.encryption import PLAIN, EncryptionSpec, SecretKey, parse_spec
from tdebench.engines.toolkit.filedb import FileDatabase, FileThreats
from tdebench.errors import EnvironmentProblem

SQLCIPHER = parse_spec("sqlcipher:aes-256-cbc")


class MinimalEngine(Engine):
    """What the DBMS is, which encryption it offers, and how to make one instance."""

    name = "minimal"
    dialect = SQLITE  # the SQL family workloads hand its instances, and what its driver can do
    description = "SQLite file, plain or SQLCipher (the example of docs/adding-an-engine.md)"

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, SQLCIPHER]

    def default_encrypted_spec(self) -> EncryptionSpec:
        return SQLCIPHER

    def check_available(self) -> None:
        try:
            sqlcipher3.connect(":memory:").close()
        except Exception as exc:  # noqa: BLE001 - any failure means: not usable here
            raise EnvironmentProblem(f"sqlcipher3 does not work: {exc}", "pip install sqlcipher3-binary") from exc

    def version(self) -> str:
        return f"SQLite {sqlcipher3.sqlite_version}"

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "MinimalInstance":
        return MinimalInstance(config, workdir, database)


class MinimalInstance(FileDatabase, Instance):
    """One database file in its own directory; the encrypted twin's key lives in memory only."""

    dialect = SQLITE

    def __init__(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self.place_file(config, workdir, f"{database}.db")  # start, stop, destroy, data_dir, ... come with it
        self.key = SecretKey.generate(256) if config.spec == SQLCIPHER else None

    def threats(self) -> "MinimalThreats":
        return MinimalThreats(self)

    def connect(self) -> Connection:
        return self.connect_path(self.path)

    def connect_path(self, path: Path) -> Connection:
        """A connection to ``path`` with the instance's key (the backup API's copy is opened the same way)."""
        conn = sqlcipher3.connect(str(path), check_same_thread=False, isolation_level=None)
        if self.key is not None:  # must come first; a raw key (x'...') skips key derivation
            conn.execute(f"PRAGMA key = \"x'{self.key.hex()}'\"")
        return conn

    def database_file(self) -> DatabaseFile:
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


class MinimalThreats(FileThreats):
    """The threat model's probes: FileThreats answers for any library without a server; this adds the key's row."""

    library = "SQLite"

    def library_keys(self) -> list[dict[str, Any]]:
        key = self.instance.key
        return [] if key is None else [self.key_row(key, "SQLCipher raw key (AES-256)", "PRAGMA key on every open")]
