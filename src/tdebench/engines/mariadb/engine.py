"""MariaDB (10.6+) as a server engine: private plain and TDE twins.

Encryption is MariaDB's data-at-rest encryption through the bundled ``file_key_management`` plugin:
AES-128/192/256 (picked by the key length) in CBC or CTR mode. A spec may narrow what is encrypted
with a scope suffix (see :mod:`tdebench.engines.mariadb.settings` and docs/engines/mariadb.md):

* ``tde:aes-256-ctr``          everything MariaDB can encrypt (the default)
* ``tde:aes-256-ctr@innodb``   InnoDB tablespaces, redo log and InnoDB temporary tablespace
* ``tde:aes-256-ctr@tables``   InnoDB tablespaces only
* ``fs:fscrypt``               the whole instance directory in an fscrypt directory of a loop-mounted ext4 image
  (:mod:`tdebench.engines.toolkit.fscrypt`); every twin of such a run lives on an image (``storage=ext4-loop``)
* ``fs:gocryptfs``             the datadir and tmpdir inside a gocryptfs (FUSE) mount run as the server's OS user
  (:mod:`tdebench.engines.toolkit.fsencrypt`), ``gocryptfs/cipher`` on disk; also ``-aessiv`` and ``-xchacha``

Each instance lives in ``<workdir>/<label>`` (0700): ``data/``, ``tmp/``, ``keys/keys.enc``,
``my.cnf``, ``server.log``, the socket. When running as root the server runs as the unprivileged
``tdebench`` user; if that user cannot traverse ``workdir`` (e.g. pytest's 0700 temp dirs) the
instance is created under ``/var/tmp`` and ``<workdir>/<label>`` becomes a symlink to it.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pymysql

from tdebench.api.cache import Cache
from tdebench.api.dialect import MARIADB
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.api.switcher import Switcher
from tdebench.api.footprint import DEFAULT_REDO, MIB, Footprint, size_setting
from tdebench.api.keys import KeyPath
from tdebench.encryption import PLAIN, EncryptionSpec, generate_password, parse_spec, redact
from tdebench.engines.mariadb import keyplugins
from tdebench.engines.mariadb.bootstrap import BENCH_USER, MariadbBootstrap
from tdebench.engines.mariadb import settings as ms
from tdebench.engines.mariadb.counters import MariadbCounters
from tdebench.engines.mariadb.filesystems import MariadbFilesystems
from tdebench.engines.mariadb.load import MariadbLoading
from tdebench.engines.mariadb.memory import BufferPool, MariadbMemory
from tdebench.engines.mariadb.keys import KeyMaterial, remove_tree
from tdebench.engines.mariadb.keysource import MariadbKeySource
from tdebench.engines.mariadb.layer import MariadbLayerSwitcher
from tdebench.engines.mariadb.switch import MariadbSwitch, MariadbTdeSwitcher
from tdebench.engines.mariadb.support import close_quietly, traversable_by
from tdebench.engines.mariadb.status import MariadbStatus
from tdebench.engines.mariadb.threats import MariadbThreats
from tdebench.engines.mariadb.tools import MariadbServerAccess
from tdebench.engines.mariadb.warm import dump_buffer_pool, load_buffer_pool
from tdebench.engines.mariadb.watchdog import FULL_SPACE, DiskFullWatchdog, full_disk_reason, log_size
from tdebench.engines.toolkit import asuser, fscrypt, fsencrypt
from tdebench.engines.toolkit.fslayer import PLAINTEXT
from tdebench.engines.toolkit.process import (ServerProcess, chown_tree, find_binary, free_port, own_path,
                                              service_user, tail)
from tdebench.errors import EnvironmentProblem

PACKAGE = "mariadb-server"
SBIN = (Path("/usr/sbin"), Path("/usr/bin"), Path("/usr/local/mysql/bin"), Path("/usr/local/sbin"))
DEFAULT_SPEC = parse_spec("tde:aes-256-ctr")
SCOPE_WORDS = tuple(ms.SCOPES)
START_TIMEOUT = 120.0
STOP_TIMEOUT = 300.0
_SOCKET_MAX = 100  # sun_path is 108 bytes


class MariadbEngine(Engine):
    """Private MariaDB servers, plain or with file_key_management TDE."""

    name = "mariadb"
    dialect = MARIADB
    description = ("MariaDB server, plain, data-at-rest encryption (file_key_management, AES-128/192/256 CBC/CTR) "
                   "or its files on filesystem encryption (ext4 fscrypt, gocryptfs)")
    cache_type = BufferPool  # BufferPoolSize for a Galera cluster (MariadbInstance.cache)
    # TDE online, after a restart that loads the key plugin; fs: offline, by a copy into the encrypted layer
    switcher_types = (MariadbTdeSwitcher, MariadbLayerSwitcher)

    def __init__(self) -> None:
        self._bins: dict[str, Path] = {}

    def binary(self, name: str) -> Path:
        """Path of ``mariadbd``, ``mariadb-install-db`` or the ``mariadb`` client."""
        if name not in self._bins:
            names = {"mariadbd": ("mariadbd", "mysqld"), "mariadb": ("mariadb", "mysql"),
                     "mariadb-install-db": ("mariadb-install-db", "mysql_install_db")}[name]
            package = "mariadb-client" if name == "mariadb" else PACKAGE
            self._bins[name] = find_binary(names, SBIN, package)
        return self._bins[name]

    def supported_specs(self) -> list[EncryptionSpec]:
        specs = [PLAIN]
        for scope in SCOPE_WORDS:
            for bits in (128, 192, 256):
                for mode in ("cbc", "ctr"):
                    specs.append(EncryptionSpec("tde", f"aes-{bits}-{mode}", scope))
        return specs + fscrypt.fs_specs() + fsencrypt.fs_specs()

    def check_spec_available(self, spec: EncryptionSpec) -> None:
        if fscrypt.is_fscrypt_spec(spec):
            fscrypt.check_available(spec)
        if fsencrypt.is_fs_spec(spec):
            fsencrypt.check_available()

    def key_path(self, spec: EncryptionSpec) -> KeyPath | None:
        """``tde:`` (AES-CBC): the hashicorp_key_management plugin; the filesystems' own paths."""
        if spec.mechanism == "tde":
            return keyplugins.key_path(spec)
        return fscrypt.key_path(spec) or fsencrypt.key_path(spec)

    def check_key_path(self, spec: EncryptionSpec) -> None:
        """The key server plugin is installed (``tde:`` specs)."""
        if spec.mechanism == "tde":
            keyplugins.check_available(self._plugin_dir())

    def plan_settings(self, specs: Sequence[EncryptionSpec]) -> dict[str, str]:
        return fscrypt.plan_settings(list(specs))

    def default_encrypted_spec(self) -> EncryptionSpec:
        return DEFAULT_SPEC

    def check_available(self) -> None:
        self.binary("mariadbd")
        self.binary("mariadb-install-db")
        plugin_dir = self._plugin_dir()
        if plugin_dir and not any(plugin_dir.glob("file_key_management.*")):
            raise EnvironmentProblem(f"MariaDB's file_key_management plugin is missing in {plugin_dir}",
                                     f"install the Debian package {PACKAGE}")

    def _plugin_dir(self) -> Path | None:
        out = subprocess.run([str(self.binary("mariadbd")), "--no-defaults", "--verbose", "--help"],
                             capture_output=True, text=True, check=False, timeout=60)
        found = re.search(r"^plugin-dir\s+(\S+)", out.stdout, re.M)
        return Path(found.group(1)) if found else None

    def version(self) -> str:
        out = subprocess.run([str(self.binary("mariadbd")), "--version"], capture_output=True, text=True,
                             check=False, timeout=60)
        match = re.search(r"Ver\s+(\S+)", out.stdout)
        return f"MariaDB {match.group(1)}" if match else out.stdout.strip()

    def default_settings(self) -> dict[str, str]:
        return dict(ms.DEFAULTS)

    def validate_settings(self, settings: dict[str, str]) -> None:
        fscrypt.validate_storage(settings)
        if fscrypt.on_loop_image(PLAIN, settings):
            fscrypt.check_available()
        ms.validate_settings({k: v for k, v in settings.items() if k != fscrypt.STORAGE_KEY})

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "MariadbInstance":
        self.validate_spec(config.spec)
        self.validate_settings(config.settings)
        return MariadbInstance(config, workdir, self, database)

    def disk_footprint(self, spec: EncryptionSpec, settings: dict[str, str]) -> Footprint:
        """Measured alike for the plain and TDE twins; the redo log is created at full size on start."""
        redo = size_setting(settings.get("innodb_log_file_size"), 1, DEFAULT_REDO)
        image = fscrypt.EXT4_OVERHEAD if fscrypt.on_loop_image(spec, settings) else 0
        fuse = 16 * MIB if fsencrypt.is_fs_spec(spec) else 0  # gocryptfs' per-block tags and per-file headers
        return Footprint(peak=5.0, final=2.0, fixed=144 * MIB + redo + image + fuse)


class MariadbInstance(MariadbBootstrap, MariadbKeySource, MariadbFilesystems, MariadbSwitch, MariadbMemory,
                      MariadbCounters, MariadbLoading, MariadbStatus, Instance):
    """One private mariadbd with its own directories, socket, password and (for TDE) keys."""

    dialect = MARIADB

    def __init__(self, config: Config, workdir: Path, engine: MariadbEngine,
                 database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self.engine = engine
        self.options, self.key_settings = keyplugins.split_settings(
            ms.merged({k: v for k, v in config.settings.items() if k != fscrypt.STORAGE_KEY}))
        self.on_image = fscrypt.on_loop_image(config.spec, config.settings)
        self.image: fscrypt.Ext4Image | None = None
        self.fs: fsencrypt.GocryptfsMount | None = None
        self.home: Path | None = None
        self.user = service_user()
        self.link = Path(workdir) / config.label
        self.root: Path | None = None
        self.relocated = ""
        self._socket_dir: Path | None = None
        self._password = generate_password()
        self._keys = KeyMaterial.generate(config.spec.key_bits or 256) if config.spec.mechanism == "tde" else None
        self._port = free_port() if config.tcp else None
        self._server: ServerProcess | None = None
        self._watchdog: DiskFullWatchdog | None = None
        self._transient: Path | None = None
        self._created = False
        self.tde_loaded = self._keys is not None  # my.cnf loads the key plugin (start_plain may unload it)
        self.in_layer = True  # datadir and tmpdir inside the fs: spec's encrypted layer (start_plain moves them out)
        self._persisted: dict[str, str] = {}  # the switch's settings, kept in my.cnf (MariadbSwitch._persist)
        self._rotation = None  # MariadbKeySource.key_rotation makes it
        switcher = engine.switcher_type(config.spec)
        self._switcher = switcher(self) if switcher is not None else None

    @property
    def encrypted(self) -> bool:
        return self.config.spec.mechanism == "tde"

    def _path(self, *parts: str) -> Path:
        if self.root is None:
            raise EnvironmentProblem(f"{self.config.label}: the instance has not been started", "call start() first")
        return self.root.joinpath(*parts)

    @property
    def data_dir(self) -> Path:
        """The instance root: data/, tmp/, keys/, logs (everything the server writes); on an ext4 image, the
        image file's directory (what is really on disk, scanned as raw blocks); under gocryptfs its cipher
        directory (the keys, my.cnf and logs beside it are scanned as the disk's)."""
        if not self.in_layer:
            return self.top_dir
        if self.image is not None:
            return self.image.image_dir
        return self.fs.cipher_dir if self.fs is not None else self._path()

    @property
    def snapshot_dir(self) -> Path:
        """The instance root (on an ext4 image: as mounted, never the image; under gocryptfs its cipher directory,
        copied while unmounted)."""
        return self.fs.cipher_dir if self.fs is not None else self._path()

    @property
    def datadir(self) -> Path:
        """The server's datadir (inside the gocryptfs mount for ``fs:gocryptfs*``)."""
        return self._data_parent() / "data"

    @property
    def tmpdir(self) -> Path:
        return self._data_parent() / "tmp"

    @property
    def top_dir(self) -> Path:
        """The instance's top directory (on an image or under gocryptfs: above the layer, and the place out of it)."""
        return self.home or self._path()

    def _data_parent(self, in_layer: bool | None = None) -> Path:
        """Where data/ and tmp/ are (``in_layer``: would be): the gocryptfs mount, the instance root, or out of the
        layer (``plaintext/`` below :attr:`top_dir`, where an ``fs:`` switch starts: layer.py)."""
        if not (self.in_layer if in_layer is None else in_layer):
            return self.top_dir / PLAINTEXT
        return self.fs.plain_dir if self.fs is not None else self._path()

    @property
    def socket(self) -> Path:
        return (self._socket_dir or self._path()) / "mariadbd.sock"

    @property
    def log_path(self) -> Path:
        return self._path("server.log")

    def files_outside_scope(self) -> list[str]:
        """Globs relative to :attr:`data_dir` that this spec's scope leaves plaintext by design."""
        if self.image is not None or self.fs is not None:
            return []  # the image is one file; fscrypt or gocryptfs covers every file of the datadir and tmpdir
        globs = ms.files_outside_scope(self.config.spec)
        return [g[3:] if g.startswith("../") else f"data/{g}" for g in globs]

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        if self._server is not None and self._server.running():
            return
        if not self._created:
            self._create()
        else:
            if self.image is not None:
                self.image.mount()
            if self.fs is not None:
                self.fs.mount()
        self._launch()

    def running(self) -> bool:
        return self._server is not None and self._server.running()

    def cache(self) -> Cache:
        """The buffer pool, as the engine's :attr:`~tdebench.api.engine.Engine.cache_type` says (a Galera
        cluster's is not kept across a restart)."""
        return self.engine.cache_type(self)

    def switcher(self) -> Switcher[Any] | None:
        """TDE switched online, ``fs:`` offline by a copy (the engine's :attr:`~MariadbEngine.switcher_types`)."""
        return self._switcher

    def threats(self) -> MariadbThreats:
        return MariadbThreats(self)

    def server_access(self) -> MariadbServerAccess:
        return MariadbServerAccess(self)

    def save_cache(self) -> dict[str, Any]:
        """Dump the buffer pool's page list (``mariadb_warm``)."""
        conn = self.connect()
        try:
            return dump_buffer_pool(conn.cursor())
        finally:
            close_quietly(conn)

    def load_cache(self, saved: dict[str, Any]) -> dict[str, Any]:
        """Load the pages of the last dump back into the buffer pool (``mariadb_warm``)."""
        conn = self.connect()
        try:
            return load_buffer_pool(conn.cursor(), saved)
        finally:
            close_quietly(conn)

    def _stop(self, discard: bool) -> None:
        """SHUTDOWN (with innodb_fast_shutdown=2 when the files are deleted next), then TERM/KILL; a server
        that waited for disk space is killed outright when its files are deleted next."""
        server, self._server = self._server, None
        self.close_counters()
        if self._watchdog is not None:
            self._watchdog.stop()
        if server is not None and discard and (self.problem() is not None or self._disk_full()):
            server.kill()  # it cannot write its way through a clean shutdown, and its files go next
        elif server is not None:
            server.stop(graceful=lambda: self._shutdown_statement(discard), timeout=STOP_TIMEOUT)
        remove_tree(self._transient)
        self._transient = None

    def _disk_full(self) -> bool:
        """The data directory's filesystem has (almost) no byte left: the watchdog may not have looked yet."""
        try:
            return shutil.disk_usage(self._path()).free < FULL_SPACE
        except (OSError, EnvironmentProblem):
            return False

    def destroy(self) -> None:
        """Stop the server and delete its files (``keep``: all but the socket directory in /tmp, which only held
        the stopped server's socket), also when stopping failed."""
        self._teardown(not self.config.keep and self.root is not None)

    def _teardown(self, discard: bool) -> None:
        try:
            self._stop(discard)
        finally:
            if self._socket_dir is not None:
                shutil.rmtree(self._socket_dir, ignore_errors=True)
                self._socket_dir = None
            if self.fs is not None:
                self.fs.destroy(keep=not discard)
                if discard:
                    self.fs = None
            if self.image is not None:
                self.image.destroy(keep=not discard)
                if discard:
                    self.image = None
            self.remove_memory_cap()  # once the gocryptfs daemon, a member too, is gone
            if discard:
                assert self.root is not None
                shutil.rmtree(self.home or self.root, ignore_errors=True)
                self.home = None
                if self.link.is_symlink():
                    self.link.unlink()
                self.root = None
                self._created = False

    def _make_root(self) -> Path:
        self.link.parent.mkdir(parents=True, exist_ok=True)
        if self.link.is_symlink():
            self.link.unlink()
        if self.link.exists():
            raise EnvironmentProblem(f"{self.link} already exists (a kept instance?)",
                                     "remove it or use another work directory")
        if self.user is None or traversable_by(self.link.parent, self.user.pw_uid, self.user.pw_gid):
            self.link.mkdir(mode=0o700)
            return self.link
        base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path(tempfile.gettempdir())
        root = own_path(Path(tempfile.mkdtemp(prefix=f"tdebench-inst-{self.config.label}-", dir=base)))
        self.link.symlink_to(root, target_is_directory=True)
        self.relocated = (f"{self.link.parent} is not traversable by the service user '{self.user.pw_name}'; "
                          f"instance created in {root}")
        return root

    def _create(self) -> None:
        """Directories, keys, my.cnf, system tables and the benchmark user (first start only)."""
        self.root = self.home = self._make_root()
        os.chmod(self.root, 0o700)
        if self.on_image:  # the instance directory is the image's encrypted (or plain) data/ directory
            if self.user is not None:
                os.chown(self.home, self.user.pw_uid, self.user.pw_gid)
            self.image = fscrypt.Ext4Image(self.config.spec, self.home / "fs", owner=self.user, keys=self.key_access)
            self.image.mount()
            self.root = self.image.data_dir
        if fsencrypt.is_fs_spec(self.config.spec):
            self.fs = fsencrypt.GocryptfsMount(self.config.spec, self.root / "gocryptfs", owner=self.user,
                                               keys=self.key_access)
        for path in (self._path("keys"),) if self.fs is not None else (self.datadir, self.tmpdir, self._path("keys")):
            path.mkdir(mode=0o700)
        if len(str(self.socket)) > _SOCKET_MAX:
            self._socket_dir = own_path(Path(tempfile.mkdtemp(prefix="tdebench-sock-", dir="/tmp")))
            chown_tree(self._socket_dir, self.user)
        if self._keys is not None:
            self._keys.write_key_file(self._path("keys", "keys.enc"))
        self._path("my.cnf").write_text(self._render_cnf())
        os.chmod(self._path("my.cnf"), 0o600)
        chown_tree(self.root, self.user)
        try:
            if self.fs is not None:  # mounted after chown_tree: root cannot enter the mount
                self.fs.mount()
                for path in (self.datadir, self.tmpdir):
                    asuser.make_dir(self.user, path)
            self._install()
        except BaseException:
            self.destroy()
            raise
        self._created = True

    def _render_cnf(self) -> str:
        lines = [f"datadir={self.datadir}", f"tmpdir={self.tmpdir}", f"socket={self.socket}",
                 f"pid_file={self._path('mariadbd.pid')}", "skip_name_resolve", "local_infile=ON"]
        lines += ["bind_address=127.0.0.1", f"port={self._port}"] if self._port else ["skip_networking"]
        lines += ms.server_lines(self.options)
        enc = ms.encryption_options(self.config.spec, self._key_plugin_options(),
                                    ms.binlog_on(self.options)) if self.tde_loaded else {}
        lines += [f"{k}={v}" for k, v in {**enc, **self._persisted}.items()]
        return ms.render_cnf(lines)

    def _launch(self) -> None:
        self._secrets()
        server = ServerProcess(f"mariadbd ({self.config.label})", self._server_argv(), self.log_path,
                               self._path("tdebench.pid"), user=self.user,
                               env=keyplugins.server_env(self._server_keys()))
        since = log_size(self.log_path)
        try:
            server.start(self._ping, timeout=START_TIMEOUT)
        except EnvironmentProblem as exc:
            full = full_disk_reason(self.log_path, self._path(), since)
            if full:  # e.g. InnoDB cannot create ibtmp1, or binlog recovery waits for space
                raise OSError(errno.ENOSPC, f"mariadbd ({self.config.label}) did not start: {full}") from exc
            raise
        finally:
            self._forget_secrets()  # the plugin has read the file key (or the start failed)
        self._server = server
        self._watchdog = DiskFullWatchdog(f"mariadbd ({self.config.label})", self.log_path, self._path(),
                                          lambda: self._connect(timeout=5, use_database=False))
        self._watchdog.start()
        self.attach_memory_cap()

    def _server_argv(self) -> list[str]:
        return [str(self.engine.binary("mariadbd")), f"--defaults-file={self._path('my.cnf')}"]

    def problem(self) -> OSError | None:
        """ENOSPC once a statement of this server waited for disk space (its connection was killed)."""
        return self._watchdog.problem if self._watchdog is not None else None

    def _ping(self) -> bool:
        conn = self._connect(timeout=2)
        try:
            conn.cursor().execute("SELECT 1")
        finally:
            close_quietly(conn)
        return True

    def _shutdown_statement(self, discard: bool = False) -> None:
        conn = self._connect(timeout=5)
        try:
            cur = conn.cursor()
            if discard:  # the data is deleted next: skip flushing the buffer pool and the purge
                cur.execute("SET GLOBAL innodb_fast_shutdown = 2")
            cur.execute("SHUTDOWN")
        finally:
            close_quietly(conn)  # the server is going away

    # use -------------------------------------------------------------------------------------
    def _connect(self, timeout: float = 10.0, use_database: bool = True) -> "pymysql.connections.Connection":
        target: dict[str, Any] = ({"host": "127.0.0.1", "port": self._port} if self._port
                                  else {"unix_socket": str(self.socket)})
        database = self.database if use_database else None
        # ssl_disabled: the private server has no TLS, and PyMySQL would otherwise build a TLS context (loading
        # the system's CA store) for every connection, about 30 ms each, on the way to finding that out
        return pymysql.connect(user=BENCH_USER, password=self._password, database=database, local_infile=True,
                               autocommit=False, charset="utf8mb4", connect_timeout=timeout, ssl_disabled=True,
                               **target)

    def check_alive(self) -> None:
        """EnvironmentProblem (with the server log's tail) if the server is not running."""
        if self._server is None:
            raise EnvironmentProblem(f"mariadbd for {self.config.label} is not started", "call start() first")
        if not self._server.running():
            code = self._server.proc.returncode if self._server.proc else None
            how = ("exited" if code is None else f"killed by signal {-code}" if code < 0 else f"exit code {code}")
            raise EnvironmentProblem(f"mariadbd for {self.config.label} is no longer running ({how}); "
                                     f"last lines of its log:\n{tail(self.log_path)}",
                                     "look at the log; restart() runs crash recovery")

    def connect(self) -> Connection:
        self.check_alive()
        try:
            return self._connect()
        except pymysql.err.OperationalError as exc:
            self.check_alive()
            raise EnvironmentProblem(f"cannot connect to mariadbd for {self.config.label}: {redact(str(exc))}",
                                     f"look at {self.log_path}") from exc

    def client_argv(self) -> tuple[list[str], int]:
        """argv for the ``mariadb`` client connected to this instance, plus an fd holding the password.

        The password travels in an anonymous in-memory file (``memfd_create``) that the tool inherits and opens
        as ``--defaults-extra-file=/dev/fd/N``, never on the command line or in a file on disk. Not a pipe:
        ``mariadb-backup`` reads that file twice (server option groups, then client groups), and a pipe is empty
        the second time, so it connected as root without a password. Pass the fd in ``pass_fds`` and close it
        afterwards.
        """
        read_fd = os.memfd_create("tdebench-client-options")
        os.fchmod(read_fd, 0o600)  # the client tools ignore a world-writable option file (a memfd starts 0777)
        os.write(read_fd, f"[client]\nuser={BENCH_USER}\npassword={self._password}\n".encode())
        target = ["--host=127.0.0.1", f"--port={self._port}"] if self._port else [f"--socket={self.socket}"]
        argv = [str(self.engine.binary("mariadb")), f"--defaults-extra-file=/dev/fd/{read_fd}", *target,
                "--local-infile=1", self.database]
        return argv, read_fd


__all__ = ["MariadbEngine", "MariadbInstance"]
