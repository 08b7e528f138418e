"""The engine plug-in interface.

An :class:`Engine` knows a DBMS: where its binaries are, its version, which encryption specs it
supports and how to provision an :class:`Instance` for one :class:`Config`. An instance is one
private database (a file or a server) that a workload loads and queries. Engines are registered
explicitly in :mod:`tdebench.engines`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from tdebench.encryption import EncryptionSpec
from tdebench.errors import UsageError

CANARY_TABLE = "tdebench_canary"


class Connection(Protocol):
    """The part of a DB-API 2 connection tdebench uses."""

    def cursor(self) -> Any: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class Config:
    """One arm of a comparison: engine + encryption spec + settings shared with its twins."""

    engine: str
    spec: EncryptionSpec
    settings: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    tcp: bool = field(default=False, compare=False)  # servers: listen on 127.0.0.1 too (default: socket only)
    keep: bool = field(default=False, compare=False)  # leave data directories behind after the run
    name: str = ""  # a user-chosen label (external targets: --target LABEL=URL); default engine-spec

    @property
    def label(self) -> str:
        """File-system-safe label, e.g. ``sqlite-sqlcipher-aes-256-cbc``, or the config's ``name``."""
        return self.name or f"{self.engine}-{self.spec.label}"


class Instance(ABC):
    """One provisioned database for one config. Use as a context manager: leaving it stops it."""

    #: False for servers tdebench does not manage (external targets): no data directory to scan or to
    #: record for clean-up, no server processes to sample; ``scan_note`` says so in verification.json.
    scannable: ClassVar[bool] = True
    scan_note: ClassVar[str] = ""

    def __init__(self, config: Config, workdir: Path) -> None:
        self.config = config
        self.workdir = workdir

    # lifecycle -----------------------------------------------------------------------------
    @abstractmethod
    def start(self) -> None:
        """Create (first call) and start the database; idempotent."""

    @abstractmethod
    def stop(self) -> None:
        """Stop the database cleanly (servers: shutdown, then TERM/KILL); idempotent."""

    def alive(self) -> bool:
        """False once the server has died (embedded engines are always alive)."""
        return True

    def problem(self) -> BaseException | None:
        """What an engine's own watch over the instance found wrong, e.g. a server waiting for disk space
        instead of failing (its statements were killed, so they report only a lost connection). The runner
        raises it in place of the error of the step that failed. Stays set after stop/destroy."""
        return None

    def interrupt(self, conn: Connection) -> None:
        """Cancel the statement running on ``conn`` (query timeouts). Called from another thread."""
        if hasattr(conn, "interrupt"):  # sqlite3 / sqlcipher3
            conn.interrupt()
        elif hasattr(conn, "cancel"):  # psycopg
            conn.cancel()
        elif hasattr(conn, "thread_id"):  # PyMySQL / mysqlclient: KILL QUERY from a second connection
            other = self.connect()
            try:
                other.cursor().execute(f"KILL QUERY {int(conn.thread_id())}")
            finally:
                other.close()

    def snapshot(self, target: Path) -> None:
        """Copy the loaded database to ``target`` (stopped while copying) for cheap resets."""
        self.stop()
        try:
            shutil.copytree(self.data_dir, target, ignore=_special_files, symlinks=True)
        finally:
            self.start()

    def restore(self, source: Path) -> None:
        """Replace the database with a snapshot taken by :meth:`snapshot`."""
        self.stop()
        try:
            owner = self.data_dir.stat()
            shutil.rmtree(self.data_dir)
            shutil.copytree(source, self.data_dir, ignore=_special_files, symlinks=True)
            if os.geteuid() == 0:  # servers run as an unprivileged user: give the files back to it
                for path in [self.data_dir, *self.data_dir.rglob("*")]:
                    os.lchown(path, owner.st_uid, owner.st_gid)
        finally:
            self.start()

    def restart(self) -> None:
        """Stop and start again (cold-cache trials, crash recovery)."""
        self.stop()
        self.start()

    def destroy(self) -> None:
        """Stop and delete everything this instance created on disk (unless kept)."""
        self.stop()

    def __enter__(self) -> "Instance":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    # use -----------------------------------------------------------------------------------
    @abstractmethod
    def connect(self) -> Connection:
        """A new connection to the benchmark database."""

    @abstractmethod
    def bulk_load(self, conn: Connection, table: str, columns: list[str], path: Path) -> int:
        """Load a ``|``-separated ``.tbl`` file into ``table`` by the engine's fastest path; returns rows."""

    def create_schema(self, conn: Connection, statements: list[str]) -> None:
        """Create the workload's tables (engines that encrypt columns create tables + decrypting views)."""
        self.execute_all(conn, statements)

    def create_constraints(self, conn: Connection, statements: list[str]) -> None:
        """Create keys and indexes after the load."""
        self.execute_all(conn, statements)

    def analyze(self, conn: Connection) -> None:
        """Refresh optimizer statistics after a load."""

    def plant_canaries(self, markers: list[str]) -> None:
        """Store one row per marker string the way the workload's data is stored (for at-rest scans)."""
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(f"DROP TABLE IF EXISTS {CANARY_TABLE}")  # verification may run more than once
            cur.execute(f"CREATE TABLE {CANARY_TABLE} (id INTEGER PRIMARY KEY, marker VARCHAR(64) NOT NULL)")
            for i, marker in enumerate(markers, start=1):
                cur.execute(f"INSERT INTO {CANARY_TABLE} (id, marker) VALUES ({i}, '{marker}')")
            conn.commit()
        finally:
            conn.close()

    @contextlib.contextmanager
    def key_material(self) -> Iterator[None]:
        """While the block runs, the key is where the engine's own tools outside the server expect it (e.g.
        ``mariadb-backup`` loading the key plugin itself); removed afterwards. No-op when none is needed."""
        yield

    @staticmethod
    def execute_all(conn: Connection, statements: list[str]) -> None:
        """Run statements in order on one cursor and commit."""
        cur = conn.cursor()
        for statement in statements:
            cur.execute(statement)
        conn.commit()

    # facts for metrics, verification and the manifest -------------------------------------
    @property
    @abstractmethod
    def data_dir(self) -> Path:
        """Directory holding every file the database writes (scanned by at-rest verification)."""

    def server_pids(self) -> list[int]:
        """PIDs of the server process tree (empty for embedded engines: the client is the server)."""
        return [os.getpid()]

    def settings(self) -> dict[str, Any]:
        """Effective settings to record in the manifest (never keys or passwords)."""
        return dict(self.config.settings)

    @abstractmethod
    def encryption_status(self) -> dict[str, Any]:
        """What the DBMS itself says about encryption: ``{"enabled": bool, ...details}``."""

    def check_encrypted(self, schema_tables: list[str]) -> None:
        """Raise :class:`tdebench.errors.RunFailed` if an encrypted config is not encrypted."""

    def files_outside_scope(self) -> list[str]:
        """Glob patterns (relative to :attr:`data_dir`) of files a narrower encryption scope leaves plaintext."""
        return []

    def flush_to_disk(self) -> None:
        """Force everything written so far to the files (checkpoint/flush) before a scan."""

    def storage_bytes(self) -> int:
        """Bytes the database occupies on disk (all files under :attr:`data_dir`)."""
        return sum(p.stat().st_size for p in self.data_dir.rglob("*") if p.is_file())

    # threat-model probes (tdebench.verify.threats; docs/security.md) -----------------------------
    # Each answers one question about an attacker. The defaults say "not known" (None), which makes the
    # row "not checked" with the reason; an engine overrides what it can answer. No hook returns a key,
    # password or canary value: they return facts, paths, or rows read back for the caller to count.

    def disk_paths(self) -> list[Path]:
        """Every file or directory this instance keeps on disk (data, logs, temp, configuration, key files),
        as a copy of the disk shows it; a FUSE mount's decrypted view is not on disk. Default: the data dir."""
        return [self.data_dir]

    def data_dir_parts(self) -> dict[str, list[str]] | None:
        """Globs relative to :attr:`data_dir` naming its parts: ``datadir`` (the database's own data directory,
        when :attr:`data_dir` also holds logs, key files or configuration; default: every file), ``redo`` (redo
        log / WAL), ``temp`` (temporary tablespaces and files). ``{}``: no part named; None: the parts cannot be
        told apart (e.g. encrypted file names)."""
        return {}

    def key_storage(self) -> list[dict[str, Any]] | None:
        """Where each key lives, one dict per key: ``key`` (what it is), ``where``, ``on_disk`` (bool),
        ``beside_data`` (bool: on the same disk as the data), ``mode`` (octal text), ``protected_by`` (what
        wraps it), ``found_in_clear`` (files holding its value in clear, searched by the engine), optionally
        ``named_in`` (the service configuration that points to it). ``[]`` for a config without keys; None when
        not known."""
        return None

    def statement_logs(self) -> dict[str, Any] | None:
        """Statement logging as the server runs: ``enabled`` (bool), ``settings`` (the switches as the server
        reports them), ``files`` (paths of statement logs), ``server_logs`` (other logs, e.g. the error log),
        ``min_duration_s`` (only statements this slow are logged; None = every statement). A dict with
        ``applicable: False`` and ``reason`` for engines without server logs; None when not known."""
        return None

    def literal_lookup_sql(self, markers: list[str], seconds: float) -> str:
        """A lookup of the canary rows with the markers as literals in the statement text, as applications
        write them, lasting at least ``seconds`` (so a slow-query log with that threshold records it)."""
        literals = ", ".join(f"'{m}'" for m in markers)
        return f"SELECT COUNT(*) FROM {CANARY_TABLE} WHERE marker IN ({literals})"

    def temp_locations(self) -> list[Path] | None:
        """Directories or files where the server writes temporary and spill files on disk (for ``fs:*``
        configs the cipher directory: file names are encrypted). Open files of :meth:`server_pids` below
        these paths are read too, including deleted ones. None when not known."""
        return None

    @contextlib.contextmanager
    def spill_probe(self, markers: list[str]) -> Iterator[dict[str, Any] | None]:
        """Hold open a query that sorts many copies of the canary rows (read the way the workload reads its
        data, decrypted where the engine decrypts) with the smallest sort memory, so its spill files exist
        while the block runs. Yields what the server reports (``spill_files``, ``spill_bytes``, ``settings``,
        ``query``), or ``{"in_memory": reason}`` when temporary data never reaches a file; None: no probe."""
        yield None

    def read_as_select_user(self) -> dict[str, Any] | None:
        """Create a user with SELECT on the benchmark schema only (no key), read every canary relation as that
        user, drop the user. ``{"user", "grants", "relations": {name: {"rows": [...]} or {"error": text}}}``;
        a dict with ``applicable: False`` and ``reason`` for engines without users; None when not known."""
        return None

    def transport_security(self) -> dict[str, Any] | None:
        """TLS as the server is configured: ``tls`` (bool: offered), ``required`` (bool), ``listen`` (where it
        listens), ``settings``. ``applicable: False`` with ``reason`` for embedded engines; None: not known."""
        return None

    def core_dump_facts(self) -> dict[str, Any] | None:
        """The engine's own switches about core dumps and locked memory (e.g. MariaDB ``core_file``,
        ``memlock``): ``server_dumps_core`` (bool or None), ``settings``. None: nothing beyond the OS limits."""
        return None


def _special_files(directory: str, names: list[str]) -> list[str]:
    """Sockets, FIFOs and the like are not copied (they belong to a running server)."""
    return [n for n in names if not (os.path.isdir(os.path.join(directory, n))
                                     or os.path.isfile(os.path.join(directory, n)))]


class Engine(ABC):
    """A DBMS plug-in."""

    name: ClassVar[str]
    dialect: ClassVar[str]
    description: ClassVar[str] = ""

    @abstractmethod
    def supported_specs(self) -> list[EncryptionSpec]:
        """Every spec this engine accepts (``none`` included)."""

    @abstractmethod
    def default_encrypted_spec(self) -> EncryptionSpec:
        """The spec compared with ``none`` when the user names none."""

    @abstractmethod
    def check_available(self) -> None:
        """Raise :class:`tdebench.errors.EnvironmentProblem` if the DBMS cannot run here."""

    @abstractmethod
    def version(self) -> str:
        """The DBMS version string."""

    @abstractmethod
    def create_instance(self, config: Config, workdir: Path) -> Instance:
        """An unstarted instance for ``config`` living under ``workdir``."""

    def default_settings(self) -> dict[str, str]:
        """Settings every twin gets unless overridden with ``--server-setting``."""
        return {}

    def supports(self, spec: EncryptionSpec) -> bool:
        return spec in self.supported_specs()

    def validate_spec(self, spec: EncryptionSpec) -> None:
        """Raise UsageError listing what this engine supports if ``spec`` is not among them."""
        if not self.supports(spec):
            allowed = ", ".join(str(s) for s in self.supported_specs())
            raise UsageError(
                f"engine '{self.name}' does not support encryption '{spec}'",
                f"use one of: {allowed}",
            )

    def validate_settings(self, settings: dict[str, str]) -> None:
        """Raise UsageError for a setting this engine does not understand (default: accept all)."""
