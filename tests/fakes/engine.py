"""FAKE: an in-memory engine for fast orchestrator tests. Tests only: it is never in the production registry
(:func:`registered` adds it for a test and removes it afterwards).

An instance is a SQLite database in memory (SQLite's ``memdb`` VFS: every connection of this process that opens
the same name shares it, with SQLite's ordinary locking, so concurrent streams work). Its data directory holds
the database's serialized image, written by :meth:`FakeInstance.flush_to_disk` and :meth:`FakeInstance.stop`:
as it is for ``none``, AES-256-CTR encrypted (``cryptography``) for ``tde:aes-256-ctr``. So the at-rest scan
sees the plain twin's rows and none of the encrypted twin's, as on a real engine; ``start`` after ``stop``
loads the image back, so restarts and snapshots keep the data.

Faults for runner tests: :meth:`FakeInstance.crash` kills the "server" (connections fail, ``alive()`` is False)
until the next start; the probe workload (tests/fakes/workload.py) calls it on request.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from tdebench import engines
from tdebench.api.dialect import SQLITE
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.footprint import MIB, Footprint
from tdebench.api.tables import ColumnSpec, TableSpec, split_line
from tdebench.encryption import PLAIN, EncryptionSpec, parse_spec
from tdebench.errors import RunFailed

NAME = "fake"
ENCRYPTED = parse_spec("tde:aes-256-ctr")
IMAGE = "database.image"


class FakeEngine(Engine):
    """An in-memory SQLite database per instance; the encrypted twin's on-disk image is AES-256-CTR."""

    name = NAME
    dialect = replace(SQLITE, product="fake (in-memory SQLite, tests only)", backup_tools=())
    description = "in-memory SQLite for orchestrator tests (tests/fakes)"

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, ENCRYPTED]

    def default_encrypted_spec(self) -> EncryptionSpec:
        return ENCRYPTED

    def check_available(self) -> None:
        """Python's own sqlite3 is always here."""

    def version(self) -> str:
        return f"fake 1 (SQLite {sqlite3.sqlite_version} memdb)"

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "FakeInstance":
        return FakeInstance(config, workdir, database)

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        return Footprint(peak=2.0, final=1.5, fixed=1 * MIB)


def _converter(column: ColumnSpec) -> Callable[[str | None], Any]:
    """Data-file text -> the value stored (as the SQLite engine stores it: decimals as REAL)."""
    number = {"int": int, "bigint": int, "bool": int, "decimal": float, "float": float}.get(column.kind)
    if number is None:
        return lambda text: text
    return lambda text: None if text is None or text == "" else number(text)


class FakeInstance(Instance):
    """One in-memory database; ``data_dir`` holds its (encrypted) image while stopped or after a flush."""

    dialect = FakeEngine.dialect

    def __init__(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self._dir = workdir / config.label
        self._uri = f"file:/tdebench-fake-{os.getpid()}-{secrets.token_hex(6)}?vfs=memdb"
        self._keeper: sqlite3.Connection | None = None  # holds the memory database while "running"
        self._key = secrets.token_bytes(32) if config.spec == ENCRYPTED else None
        self.crashed = False
        self.starts = 0

    # lifecycle -------------------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        return self._dir

    def start(self) -> None:
        if self._keeper is not None:
            return
        self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._keeper = sqlite3.connect(self._uri, uri=True, check_same_thread=False, isolation_level=None)
        image = self._dir / IMAGE
        if image.is_file() and image.stat().st_size:  # deserialized: private to its connection, so copy it over
            loaded = sqlite3.connect(":memory:")
            loaded.deserialize(self._crypt(image.read_bytes()))
            loaded.backup(self._keeper)
            loaded.close()
        self.crashed = False
        self.starts += 1

    def stop(self) -> None:
        if self._keeper is None:
            return
        if not self.crashed:
            self._write_image()
        self._keeper.close()
        self._keeper = None

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)

    def alive(self) -> bool:
        return self._keeper is not None and not self.crashed

    def crash(self) -> None:
        """The "server" dies: every connection fails until the next start (restart)."""
        self.crashed = True

    def snapshot(self, target: Path) -> None:
        self._write_image()
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self._dir / IMAGE, target / IMAGE)

    def restore(self, source: Path) -> None:
        self.stop()
        shutil.copy2(source / IMAGE, self._dir / IMAGE)
        self.start()

    # use -------------------------------------------------------------------------------------------
    def connect(self) -> Connection:
        if self._keeper is None or self.crashed:
            raise RunFailed(f"{self.config.label}: the fake server is not running", "restart it")
        conn = sqlite3.connect(self._uri, uri=True, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 60000")
        return conn

    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        sql = (f"INSERT INTO {table.name} ({', '.join(table.column_names)}) "
               f"VALUES ({', '.join('?' for _ in table.columns)})")
        cur = conn.cursor()
        cur.execute("BEGIN")
        rows = 0
        converters = [_converter(c) for c in table.columns]
        with open(path, encoding="utf-8", newline="") as handle:
            batch = []
            for line in handle:
                fields = split_line(line.rstrip("\n"))
                batch.append([convert(v) for convert, v in zip(converters, fields)])
                if len(batch) >= 10_000:
                    cur.executemany(sql, batch)
                    rows, batch = rows + len(batch), []
            cur.executemany(sql, batch)
            rows += len(batch)
        cur.execute("COMMIT")
        return rows

    def analyze(self, conn: Connection) -> None:
        conn.cursor().execute("ANALYZE")

    # facts -----------------------------------------------------------------------------------------
    def flush_to_disk(self) -> None:
        self._write_image()

    def encryption_status(self) -> dict[str, Any]:
        image = self._dir / IMAGE
        self._write_image()
        plain_header = image.read_bytes()[:16] == b"SQLite format 3\x00"
        return {"enabled": not plain_header, "cipher": "AES-256-CTR (image)" if self._key else None}

    def check_encrypted(self, schema_tables: list[str]) -> None:
        if self._key is not None and not self.encryption_status()["enabled"]:
            raise RunFailed(f"{self.config.label}: the image is plaintext", "the fake's encryption is broken")

    def storage_breakdown(self) -> dict[str, Any] | None:
        conn = self.connect()
        try:
            pages = dict(conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall())
            owners = conn.execute("SELECT name, tbl_name, type FROM sqlite_master").fetchall()
        finally:
            conn.close()
        tables: dict[str, dict[str, int]] = {}
        for name in self.tables:
            data = int(pages.get(name, 0))
            index = sum(int(pages.get(n, 0)) for n, t, kind in owners if kind == "index" and t == name)
            tables[name] = {"table_bytes": data, "index_bytes": index, "total_bytes": data + index}
        totals = {k: sum(t[k] for t in tables.values()) for k in ("table_bytes", "index_bytes", "total_bytes")}
        return {"tables": tables, "totals": totals, "data_dir_bytes": self.storage_bytes()}

    # the image -------------------------------------------------------------------------------------
    def _write_image(self) -> None:
        if self._keeper is None or self.crashed:
            return
        self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self._dir / f".{IMAGE}.tmp"
        try:
            image = self._keeper.serialize()
        except sqlite3.OperationalError:  # a database without a single page yet
            image = b""
        tmp.write_bytes(self._crypt(image) if image else b"")
        os.replace(tmp, self._dir / IMAGE)

    def _crypt(self, data: bytes) -> bytes:
        """AES-256-CTR with a nonce stored in front (encrypting) or read from there (decrypting)."""
        if self._key is None:
            return data
        if data[:16] == b"SQLite format 3\x00":  # encrypt
            nonce = secrets.token_bytes(16)
            enc = Cipher(algorithms.AES(self._key), modes.CTR(nonce)).encryptor()
            return b"FAKEENC1" + nonce + enc.update(data) + enc.finalize()
        nonce = data[8:24]
        dec = Cipher(algorithms.AES(self._key), modes.CTR(nonce)).decryptor()
        return dec.update(data[24:]) + dec.finalize()


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """The fake engine in the registry while the block runs (``--engine fake`` works in-process)."""
    engines.register(NAME, FakeEngine)
    try:
        yield
    finally:
        engines.unregister(NAME)
