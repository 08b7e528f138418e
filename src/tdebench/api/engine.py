"""The engine plug-in interface.

An :class:`Engine` knows a DBMS: where its binaries are, its version, which encryption specs it
supports and how to provision an :class:`Instance` for one :class:`Config`. An instance is one
private database (a file or a server) that a workload loads and queries; it knows nothing of any
workload: the workload hands it SQL text in the instance's :class:`~tdebench.api.dialect.Dialect`
family and :class:`~tdebench.api.tables.TableSpec` descriptions of its tables. Engines are
registered explicitly in :mod:`tdebench.engines`.

Optional behaviour is a documented method with a default here (never looked up with ``getattr``); a group of
hooks only some engines have is a capability object an instance returns, or None where it has none
(:meth:`Instance.cluster`, :meth:`Instance.cache`, :meth:`Instance.switcher`, :meth:`Instance.threats`,
:meth:`Instance.server_access`, :meth:`Instance.database_file`), and the :class:`Engine` flags the runner reads
before any work follow from the classes the engine names.
"""

from __future__ import annotations

import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

from tdebench.api.cache import Cache, WarmCache
from tdebench.api.canary import CANARY_TABLE
from tdebench.api.cluster import Cluster
from tdebench.api.connection import Connection
from tdebench.api.dialect import Dialect
from tdebench.api.footprint import UNMEASURED, Footprint, allocated_bytes
from tdebench.api.config import Config
from tdebench.api.keys import KeyAccess, KeyPath, KeyRotation
from tdebench.api.server import DatabaseFile, ServerAccess
from tdebench.api.switch import SwitchMethod
from tdebench.api.switcher import Switcher, switcher_type
from tdebench.api.tables import TableSpec
from tdebench.api.threat_probes import ThreatProbes
from tdebench.encryption import EncryptionSpec
from tdebench.errors import UsageError

DEFAULT_DATABASE = "tdebench"


class SqlTranslator(Protocol):
    """A workload's own rendering of its canonical (``postgres`` family) SQL for a server's dialect (``target``:
    ``mysql``, ``mariadb``, ``postgres``, ``tsql`` or ``oracle``). Instances whose dialect is ``translated`` ask
    it first and rewrite generically (sqlglot) what it leaves (None)."""

    def statements(self, statements: Sequence[str], target: str) -> list[str] | None:
        """A whole batch (e.g. the schema's DDL) in ``target``'s SQL, or None."""

    def statement(self, sql: str, target: str) -> str | None:
        """One statement in ``target``'s SQL, or None."""


class Instance(ABC):
    """One provisioned database for one config. Use as a context manager: leaving it stops it."""

    #: False for servers tdebench does not manage (external targets): no data directory to scan or to
    #: record for clean-up, no server processes to sample; ``scan_note`` says so in verification.json.
    scannable: ClassVar[bool] = True
    scan_note: ClassVar[str] = ""
    #: the SQL and driver capabilities of this instance (an external target sets its own per instance)
    dialect: Dialect
    #: the config's key server (:meth:`take_keys`); None: the engine's own keys
    key_access: KeyAccess | None = None

    def __init__(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> None:
        self.config = config
        self.workdir = workdir
        #: the database (schema) name the workload asked for; servers create it, files are named after it
        self.database = database
        #: the workload's tables, as handed to :meth:`create_schema`
        self.tables: dict[str, TableSpec] = {}

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

    @property
    def snapshot_dir(self) -> Path:
        """What :meth:`snapshot` and :meth:`restore` copy: the data directory (an engine on a disk image: its files
        as mounted, never the image)."""
        return self.data_dir

    def snapshot(self, target: Path) -> None:
        """Copy the loaded database to ``target`` (stopped while copying) for cheap resets."""
        self.stop()
        try:
            shutil.copytree(self.snapshot_dir, target, ignore=_special_files, symlinks=True)
        finally:
            self.start()

    def restore(self, source: Path) -> None:
        """Replace the database with a snapshot taken by :meth:`snapshot`."""
        self.stop()
        try:
            home = self.snapshot_dir
            owner = home.stat()
            shutil.rmtree(home)
            shutil.copytree(source, home, ignore=_special_files, symlinks=True)
            if os.geteuid() == 0:  # servers run as an unprivileged user: give the files back to it
                for path in [home, *home.rglob("*")]:
                    os.lchown(path, owner.st_uid, owner.st_gid)
        finally:
            self.start()

    def restart(self) -> None:
        """Stop and start again (cold-cache trials, crash recovery)."""
        self.stop()
        self.start()

    def cache(self) -> Cache | None:
        """The engine's own cache, sized by ``--memory-ratio`` (a :class:`~tdebench.api.cache.WarmCache` when a
        restart can keep its pages): an object of its engine's :attr:`Engine.cache_type`; None (default): none
        tdebench can size."""
        return None

    def client_nodes(self) -> int:
        """How many nodes serve the workload's connections (a cluster: each of its nodes); 1: a single server."""
        return 1

    def connect_node(self, index: int, causal: bool = False) -> Connection:
        """A connection to node ``index`` (0-based, below :meth:`client_nodes`; 0 is where :meth:`connect` goes);
        ``causal``: its reads wait for every transaction committed on any node before them. Default: connect()."""
        return self.connect()

    def cluster(self) -> Cluster | None:
        """The instance's nodes as a cluster (killed and rejoined by ``--fault``): an object of its engine's
        :attr:`Engine.cluster_type`; None (default): a single server or an embedded database."""
        return None

    def switcher(self) -> Switcher[Any] | None:
        """How the instance switches its existing data between plaintext and its spec in place (the ``encrypt``
        workload): an object of the class its engine's :meth:`Engine.switcher_type` names for the spec, the same one
        at every call (it may keep what a switch left, e.g. an old copy to delete); None (default): it cannot."""
        return None

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
        """A new connection to the benchmark database. Also called in forked child processes (TPC-C virtual
        users): the instance's own liveness checks must hold there, where the server is not a child process."""

    @abstractmethod
    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        """Load a data file (the layout of :mod:`tdebench.api.tables`) into ``table`` by the engine's fastest
        path; returns rows."""

    def create_schema(self, conn: Connection, statements: Sequence[str], tables: Sequence[TableSpec] = ()) -> None:
        """Create the workload's tables: ``statements`` (in the instance's dialect family) create ``tables``.
        Engines that encrypt columns create tables plus decrypting, updatable views instead."""
        self.tables.update({t.name: t for t in tables})
        self.execute_all(conn, statements)

    def drop_tables(self, conn: Connection, tables: Sequence[str]) -> None:
        """Drop the workload's ``tables`` if they exist (children last in ``tables``, so dropped first), with
        whatever the engine made for them (base tables, views, triggers)."""
        cur = conn.cursor()
        for name in reversed(tables):
            cur.execute(f"DROP TABLE IF EXISTS {name}")
        conn.commit()

    def create_constraints(self, conn: Connection, statements: Sequence[str]) -> None:
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

    def use_translator(self, translator: SqlTranslator | None) -> None:
        """Instances whose dialect is ``translated`` rewrite the workload's statements with ``translator`` first.
        Default: the instance runs the workload's SQL as it is."""

    def take_keys(self, access: KeyAccess) -> None:
        """From its first start on, take the keys from ``access`` (the config's key server) instead of the
        engine's own arrangement. Only called when the engine's :meth:`Engine.key_path` for the spec is not None;
        engines whose keys live elsewhere than this object (a mount, a key plugin) pass it on."""
        self.key_access = access

    def key_rotation(self) -> KeyRotation | None:
        """How the instance re-encrypts its data under newer key versions while it serves; None (default): it
        cannot (no key server, or an engine without key versions)."""
        return None

    @staticmethod
    def execute_all(conn: Connection, statements: Sequence[str]) -> None:
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
        """PIDs of the processes that do the database's work, sampled for CPU and I/O: the server process tree;
        for an embedded engine tdebench's own process (the client is the server), which is the default."""
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
        """Bytes the database occupies on disk (allocated to all files under :attr:`data_dir`)."""
        return allocated_bytes(self.data_dir)

    def storage_breakdown(self) -> dict[str, Any] | None:
        """The engine's own per-table sizes (``{"tables": {...}, "totals": {...}, ...}``), or None to let
        :mod:`tdebench.measure.storage` read them from the dialect's storage catalog."""
        return None

    def counters(self) -> dict[str, float]:
        """The engine's own cumulative counters, read before and after every step (their deltas are recorded
        per step): what crossed the encryption boundary and how the cache did. Names come from the vocabulary of
        :data:`tdebench.api.counters.COUNTERS`; an engine leaves out what it cannot count. Default: none."""
        return {}

    def background_work(self) -> list[str]:
        """What the server is still doing on its own after the load (e.g. MariaDB's encryption threads encrypting
        tablespaces), one phrase each. Work like that loads one twin and not the other during the first trials,
        so the runner waits until it is empty (with a time limit) before the first trial. Default: none."""
        return []

    def catalog_sizes(self, tables: Sequence[str]) -> dict[str, dict[str, int]] | None:
        """Per-table sizes (``rows``, ``table_bytes``, ``index_bytes``, ``total_bytes``) that the engine reads from
        its server's own catalog itself (a server whose connection rewrites the workload's SQL); None: read from
        the dialect's storage catalog by :mod:`tdebench.measure.storage`."""
        return None

    def relation_name(self, table: str) -> str:
        """The relation that stores ``table``'s rows (column encryption keeps them in another table)."""
        return table

    def database_file(self) -> DatabaseFile | None:
        """The one file an embedded database lives in, with how to open a second one the same way (the backup API
        and SQLite's ``dbstat`` read it): a :class:`~tdebench.api.server.DatabaseFile`; None (default): no such
        file (a server, or a library whose copies tdebench does not open)."""
        return None

    def owned_paths(self) -> list[Path]:
        """Directories the instance makes outside its work dir (recorded for ``tdebench cleanup``)."""
        return []

    # capabilities of only some engines ------------------------------------------------------
    def server_access(self) -> ServerAccess | None:
        """How the engine's own command-line tools and a second database reach the running server (backup kinds,
        the ``encrypt`` workload's second database): a :class:`~tdebench.api.server.ServerAccess`; None (default):
        an embedded database, or a server whose tools tdebench does not drive. An engine whose
        :attr:`Dialect.backup_tools` name a server's tools returns one."""
        return None

    def threats(self) -> ThreatProbes | None:
        """What the instance can tell about each attacker of the threat model (docs/security.md): a
        :class:`~tdebench.api.threat_probes.ThreatProbes`; None (default): the engine offers no probes, and the
        threat model asks the defaults (:func:`threat_probes`), so every row that needs an answer says "not
        checked"."""
        return None

    @property
    def server_version(self) -> str:
        """The version the running server reports ("" : the engine's :meth:`Engine.version` is recorded)."""
        return ""


def _special_files(directory: str, names: list[str]) -> list[str]:
    """Sockets, FIFOs and the like are not copied (they belong to a running server)."""
    return [n for n in names if not (os.path.isdir(os.path.join(directory, n))
                                     or os.path.isfile(os.path.join(directory, n)))]


def threat_probes(instance: Instance) -> ThreatProbes:
    """What the threat model asks of ``instance``: its :meth:`Instance.threats`, or, for an engine that offers
    none, the defaults ("not known"; the data directory as everything it keeps on disk)."""
    return instance.threats() or ThreatProbes(instance)


class Engine(ABC):
    """A DBMS plug-in."""

    name: ClassVar[str]
    #: the SQL and driver capabilities of this engine's instances
    dialect: ClassVar[Dialect]
    description: ClassVar[str] = ""
    #: servers tdebench does not manage (external targets): their disks are not ours to check
    remote: ClassVar[bool] = False
    #: the class of the :class:`~tdebench.api.cache.Cache` its instances return from :meth:`Instance.cache`; None:
    #: no cache tdebench can size (``--memory-ratio`` is then refused before any work); :attr:`cache_setting`,
    #: :attr:`page_sources`, :attr:`memory_headroom` and :attr:`warm_restart` follow from it
    cache_type: ClassVar[type[Cache] | None] = None
    #: the class of the :class:`~tdebench.api.cluster.Cluster` its instances return from :meth:`Instance.cluster`;
    #: None: its instances are not clusters (:attr:`faults` and :attr:`cluster_nodes` follow from it)
    cluster_type: ClassVar[type[Cluster] | None] = None
    #: the classes of the :class:`~tdebench.api.switcher.Switcher` its instances return from
    #: :meth:`Instance.switcher`, one per kind of spec they switch (the first whose ``switches(spec)`` holds); empty:
    #: no data of it can be switched (the ``encrypt`` workload is then refused before any work).
    #: :meth:`switch_method` follows from them
    switcher_types: ClassVar[tuple[type[Switcher[Any]], ...]] = ()

    @property
    def cache_setting(self) -> str:
        """The setting its cache's :meth:`~tdebench.api.cache.Cache.resize` changes; "": no cache to size."""
        return self.cache_type.setting if self.cache_type is not None else ""

    @property
    def page_sources(self) -> tuple[str, ...]:
        """Where a page its cache misses can come from (:attr:`tdebench.api.cache.Cache.page_sources`)."""
        return self.cache_type.page_sources if self.cache_type is not None else ()

    @property
    def memory_headroom(self) -> int:
        """Bytes an instance takes beyond its cache (:attr:`tdebench.api.cache.Cache.headroom`)."""
        return self.cache_type.headroom if self.cache_type is not None else 0

    @property
    def warm_restart(self) -> bool:
        """Its instances restart keeping their cache (``--restart-twins``): its cache is a
        :class:`~tdebench.api.cache.WarmCache`."""
        return self.cache_type is not None and issubclass(self.cache_type, WarmCache)

    @property
    def cluster_nodes(self) -> int:
        """Nodes per instance by default (``--nodes``, setting ``nodes``): its :attr:`cluster_type`'s
        ``default_nodes``; 0: not a cluster (``--nodes`` is refused for it)."""
        return self.cluster_type.default_nodes if self.cluster_type is not None else 0

    @property
    def faults(self) -> tuple[str, ...]:
        """The faults the runner may inject into its instances during a trial (``--fault``,
        :mod:`tdebench.api.faults`): those of its :attr:`cluster_type`; empty: ``--fault`` is refused for it."""
        return self.cluster_type.faults if self.cluster_type is not None else ()

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
    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> Instance:
        """An unstarted instance for ``config`` living under ``workdir``, holding database ``database``."""

    def key_path(self, spec: EncryptionSpec) -> KeyPath | None:
        """How this engine's instances of ``spec`` take their keys from a key server (:mod:`tdebench.api.keys`);
        None (default) when the spec has no key or the engine no way to take it from one."""
        return None

    def check_key_path(self, spec: EncryptionSpec) -> None:
        """Raise :class:`tdebench.errors.EnvironmentProblem` if what :meth:`key_path` needs (a key plugin) is missing
        here; called before any work for configs that keep their keys on a key server. Default: nothing."""

    def check_spec_available(self, spec: EncryptionSpec) -> None:
        """Raise :class:`tdebench.errors.EnvironmentProblem` if what ``spec`` needs (a tool, an extension) is
        missing here; called before any work starts. Default: nothing beyond :meth:`check_available`."""

    def check_tables(self, config: Config, tables: Sequence[TableSpec]) -> None:
        """Raise UsageError if ``config``'s settings do not fit the workload's tables (e.g. a column to encrypt
        that no table has); called before any work starts. Default: nothing to check."""

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        """Disk one instance takes per byte of input data (the disk guard). Default: a generous guess."""
        return UNMEASURED

    def variant(self, settings: dict[str, str]) -> str:
        """A word added to the labels of configs whose ``settings`` make them a variant of the same spec (e.g.
        ``tls``: a cluster replicating over TLS), so that both variants can run side by side; "" (default): none."""
        return ""

    def check_fault(self, kind: str, node: int | None, config: Config) -> None:
        """Raise UsageError if ``config``'s instance cannot suffer fault ``kind`` (of :attr:`faults`) on ``node``
        (None: the engine's choice); called before any work. Default: nothing beyond :attr:`faults`."""

    def default_settings(self) -> dict[str, str]:
        """Settings every twin gets unless overridden with ``--server-setting``."""
        return {}

    def plan_settings(self, specs: Sequence[EncryptionSpec]) -> dict[str, str]:
        """Settings every twin of a run comparing ``specs`` gets, below the user's ``--server-setting`` (e.g. a
        plain twin on the same kind of filesystem as an encrypted one). ``specs`` holds this engine's specs and
        every other engine's of the run, so that configs compared across engines share such settings. Default:
        none."""
        return {}

    def spec_notes(self) -> list[str]:
        """Lines ``tdebench engines`` shows about the specs (default: the list of supported specs)."""
        return [f"specs: {', '.join(str(s) for s in self.supported_specs())}"]

    def switcher_type(self, spec: EncryptionSpec) -> type[Switcher[Any]] | None:
        """The class of the switcher an instance of ``spec`` returns (:attr:`switcher_types`); None: data stored
        plaintext cannot be switched to ``spec`` in place."""
        return switcher_type(self.switcher_types, spec) if self.supports(spec) else None

    def switch_method(self, spec: EncryptionSpec) -> SwitchMethod | None:
        """How plaintext data are switched to ``spec`` (None: they cannot be), from its :meth:`switcher_type`."""
        found = self.switcher_type(spec)
        return found.describe() if found is not None else None

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
