"""MySQL (8.0.24+) as a server engine: a private plain twin and an InnoDB-encrypted twin.

Only when a real MySQL ``mysqld`` is installed. Debian 12 has no MySQL package: its ``/usr/sbin/mysqld`` is
MariaDB (use ``--engine mariadb``), and an existing MySQL server elsewhere is measured with
``--target LABEL=mysql://USER@HOST:PORT/DB[#tde:aes-256-cbc]`` (the ``external`` engine).

Encryption: ``tde:aes-256-cbc`` only. InnoDB has one key size (AES-256); ``tde:aes-128-*``/``192`` are
refused with that reason, since a result labelled so would measure AES-256. The keyring is
``component_keyring_file`` (see :mod:`tdebench.engines.mysql.setup`); the encrypted twin sets
``default_table_encryption``, redo, undo and temporary-tablespace encryption and encrypts the ``mysql``
system tablespace. ``ibdata1`` (system tablespace) cannot be encrypted by MySQL.

SQL: the same text as for MySQL external targets and ``tdebench script --dialect mysql`` (canonical SQL
translated by :mod:`tdebench.engines.toolkit.dbapi.translate`); loading by ``LOAD DATA LOCAL INFILE``.

Instance layout under ``workdir/<label>`` (0700, owned by the service user when run as root): ``data/``
(with the local keyring manifest/config), ``tmp/``, ``keys/component_keyring_file``, ``my.cnf``,
``server.log``, the socket.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from functools import cached_property
from pathlib import Path
from typing import Any

from tdebench.api.footprint import allocated_bytes
from tdebench.api.engine import DEFAULT_DATABASE, Config, Connection, Engine, Instance
from tdebench.encryption import PLAIN, EncryptionSpec, generate_password, parse_spec, redact
from tdebench.engines.mysql import setup
from tdebench.engines.toolkit.dbapi.schema import TranslatedSchemaMixin
from tdebench.engines.toolkit.dbapi.translate import TranslatingConnection, Translator
from tdebench.engines.toolkit.dbapi.status import probe_mysql_family
from tdebench.engines.toolkit.dbapi.kinds import KINDS, kind_dialect, mysql_key_size_reason
from tdebench.engines.toolkit.asuser import user_can_reach
from tdebench.engines.toolkit.process import ServerProcess, chown_tree, free_port, service_user, tail
from tdebench.errors import EnvironmentProblem, RunFailed, UsageError
from tdebench.lifeline import helper_preexec

SBIN = (Path("/usr/sbin"), Path("/usr/local/mysql/bin"), Path("/usr/local/sbin"), Path("/opt/mysql/bin"),
        Path("/usr/bin"))
SPEC = parse_spec("tde:aes-256-cbc")
BENCH_USER = "bench"
MIN_VERSION = (8, 0, 24)  # component_keyring_file and performance_schema.keyring_component_status
START_TIMEOUT = 180.0
_NO_MYSQL = ("no MySQL package exists for Debian 12 (Debian ships MariaDB, whose mysqld is MariaDB's)")
_USE_TARGET = ("use --engine mariadb for MariaDB; install MySQL 8.0.24+ from dev.mysql.com (then tdebench finds "
               "its mysqld), or measure a MySQL server you run elsewhere: tdebench run --target "
               "plain=mysql://USER@HOST:3306/DB --target enc='mysql://USER@HOST2:3306/DB#tde:aes-256-cbc'")


def find_mysqld() -> Path:
    """A mysqld that is MySQL (not MariaDB); EnvironmentProblem saying what to do otherwise."""
    seen: list[str] = []
    for directory in SBIN:
        candidate = directory / "mysqld"
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            continue
        out = _version_text(candidate)
        if "mariadb" in out.lower() or "mariadb" in candidate.resolve().name:
            seen.append(f"{candidate} is MariaDB ({out.strip()[:60]})")
            continue
        return candidate
    found = shutil.which("mysqld")
    if found and "mariadb" not in _version_text(Path(found)).lower():
        return Path(found)
    raise EnvironmentProblem(f"no MySQL server binary (mysqld) here: {_NO_MYSQL}", _USE_TARGET, seen)


def _version_text(path: Path) -> str:
    try:
        return subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60,
                              check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


class MysqlEngine(Engine):
    """Private MySQL servers, plain or with InnoDB data-at-rest encryption (AES-256)."""

    name = "mysql"
    dialect = kind_dialect(KINDS["mysql"])  # canonical SQL, translated to MySQL (as for MySQL external targets)
    description = "MySQL 8.0.24+ server (when installed), plain or InnoDB encryption with component_keyring_file"

    @cached_property
    def mysqld(self) -> Path:
        return find_mysqld()

    def supported_specs(self) -> list[EncryptionSpec]:
        return [PLAIN, SPEC]

    def default_encrypted_spec(self) -> EncryptionSpec:
        return SPEC

    def validate_spec(self, spec: EncryptionSpec) -> None:
        reason = mysql_key_size_reason(spec)
        if reason:
            raise UsageError(f"engine 'mysql' does not support encryption '{spec}': {reason}",
                             "use tde:aes-256-cbc (or none)")
        super().validate_spec(spec)

    def check_available(self) -> None:
        version = setup.parse_version(_version_text(self.mysqld))
        if version is None or version < MIN_VERSION:
            raise EnvironmentProblem(f"{self.mysqld} is MySQL {version or '?'}; tdebench needs 8.0.24 or newer "
                                     "(component_keyring_file)", "install MySQL 8.0.24+ (8.4 LTS recommended)")

    def version(self) -> str:
        version = setup.parse_version(_version_text(self.mysqld))
        return f"MySQL {'.'.join(map(str, version))}" if version else "MySQL (unknown version)"

    def plugin_dir(self) -> Path:
        out = subprocess.run([str(self.mysqld), "--no-defaults", "--verbose", "--help"], capture_output=True,
                             text=True, timeout=60, check=False).stdout
        match = re.search(r"^plugin[-_]dir\s+(\S+)", out, re.M)
        return Path(match.group(1)) if match else self.mysqld.resolve().parent.parent / "lib" / "plugin"

    def default_settings(self) -> dict[str, str]:
        return dict(setup.DEFAULTS)

    def validate_settings(self, settings: dict[str, str]) -> None:
        setup.validate_settings(settings)

    def create_instance(self, config: Config, workdir: Path, database: str = DEFAULT_DATABASE) -> "MysqlInstance":
        self.validate_spec(config.spec)
        self.validate_settings(config.settings)
        if not config.spec.is_plain:
            setup.check_global_keyring_files(self.mysqld, self.plugin_dir())
        return MysqlInstance(config, workdir, self, database)


class MysqlInstance(TranslatedSchemaMixin, Instance):
    """One private mysqld: its directories, socket, generated password and (encrypted twin) keyring."""

    dialect = kind_dialect(KINDS["mysql"])

    def __init__(self, config: Config, workdir: Path, engine: MysqlEngine, database: str = DEFAULT_DATABASE) -> None:
        super().__init__(config, workdir, database)
        self.engine = engine
        self.kind = KINDS["mysql"]
        self.translator = Translator("mysql")
        self.load_methods: set[str] = set()
        self.options = setup.merged(config.settings)
        self.user = service_user()
        self.root = Path(workdir) / config.label
        self._password = generate_password()
        self._port = free_port() if config.tcp else None
        self._server: ServerProcess | None = None
        self._created = False

    @property
    def encrypted(self) -> bool:
        return not self.config.spec.is_plain

    @property
    def data_dir(self) -> Path:
        return self.root

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def socket(self) -> Path:
        return self.root / "mysqld.sock"

    # lifecycle ---------------------------------------------------------------------------------------------
    def _cnf(self, encryption: bool) -> str:
        paths = {"datadir": self.datadir, "tmpdir": self.root / "tmp", "socket": self.socket,
                 "pid_file": self.root / "mysqld.pid", "log_error": self.root / "server.log"}
        enc = setup.encryption_options(self.config.spec, "skip_log_bin" not in self.options) if encryption else {}
        return setup.render_cnf(paths, self._port, self.options, enc)

    def _create(self) -> None:
        if len(str(self.socket)) > 100 or not user_can_reach(self.root.parent, self.user):
            raise EnvironmentProblem(f"{self.root} is too deep or not reachable for the service user",
                                     "pass --work-dir with a short path the 'tdebench' user can traverse")
        self.root.mkdir(mode=0o700, parents=True)
        for sub in ("tmp", "keys"):
            (self.root / sub).mkdir(mode=0o700)
        (self.root / "my.cnf").write_text(self._cnf(encryption=False))
        chown_tree(self.root, self.user)
        argv = [str(self.engine.mysqld), f"--defaults-file={self.root / 'my.cnf'}", "--initialize-insecure"]
        kwargs: dict[str, Any] = {}
        if self.user is not None:
            kwargs.update(user=self.user.pw_uid, group=self.user.pw_gid, extra_groups=[])
        result = subprocess.run(argv, capture_output=True, text=True, timeout=START_TIMEOUT, check=False,
                                stdin=subprocess.DEVNULL, cwd="/", preexec_fn=helper_preexec(), **kwargs)
        if result.returncode != 0:
            raise EnvironmentProblem(f"mysqld --initialize-insecure failed (code {result.returncode}):\n"
                                     f"{tail(self.root / 'server.log')}", "look at the log above")
        if self.encrypted:
            setup.write_local_keyring_files(self.datadir, self.root / "keys" / "component_keyring_file")
        (self.root / "my.cnf").write_text(self._cnf(encryption=True))
        os.chmod(self.root / "my.cnf", 0o600)
        chown_tree(self.root, self.user)

    def start(self) -> None:
        if self._server is not None and self._server.running():
            return
        first = not self._created
        if first:
            self._create()
        argv = [str(self.engine.mysqld), f"--defaults-file={self.root / 'my.cnf'}"]
        server = ServerProcess(f"mysqld ({self.config.label})", argv, self.root / "server.log",
                               self.root / "tdebench.pid", user=self.user)
        server.start(lambda: self._ping(as_root=first), timeout=START_TIMEOUT)
        self._server = server
        if first:
            self._setup_users()
            self._created = True

    def _setup_users(self) -> None:
        """bench user (password over the socket only), the database, the encrypted mysql tablespace; root locked."""
        import pymysql

        conn = pymysql.connect(unix_socket=str(self.socket), user="root", password="", autocommit=True)
        try:
            cur = conn.cursor()
            for host in ["localhost"] + (["127.0.0.1"] if self._port else []):
                cur.execute(f"CREATE USER '{BENCH_USER}'@'{host}' IDENTIFIED BY %s", (self._password,))
                cur.execute(f"GRANT ALL ON *.* TO '{BENCH_USER}'@'{host}'")
            cur.execute(f"CREATE DATABASE {self.database}")
            if self.encrypted:
                cur.execute("ALTER TABLESPACE mysql ENCRYPTION = 'Y'")
            cur.execute("ALTER USER 'root'@'localhost' ACCOUNT LOCK")
        finally:
            conn.close()

    def _ping(self, as_root: bool = False) -> bool:
        import pymysql

        conn = (pymysql.connect(unix_socket=str(self.socket), user="root", password="", connect_timeout=2)
                if as_root else self._connect(timeout=2))
        conn.close()
        return True

    def _shutdown(self) -> None:
        conn = self._connect(timeout=5)
        try:
            conn.cursor().execute("SHUTDOWN")
        finally:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - the server is going away
                pass

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop(graceful=self._shutdown if self._created else None, timeout=300.0)

    def alive(self) -> bool:
        return self._server is not None and self._server.running()

    def destroy(self) -> None:
        self.stop()
        if not self.config.keep:
            shutil.rmtree(self.root, ignore_errors=True)
            self._created = False

    # use ---------------------------------------------------------------------------------------------------
    def _connect(self, timeout: float = 10.0) -> Any:
        import pymysql

        target: dict[str, Any] = ({"host": "127.0.0.1", "port": self._port} if self._port
                                  else {"unix_socket": str(self.socket)})
        return pymysql.connect(user=BENCH_USER, password=self._password, database=self.database, local_infile=True,
                               autocommit=False, charset="utf8mb4", connect_timeout=timeout, **target)

    def connect(self) -> Connection:
        if not self.alive():
            raise EnvironmentProblem(f"mysqld for {self.config.label} is not running; last lines of its log:\n"
                                     f"{tail(self.root / 'server.log')}", "restart() runs crash recovery")
        return TranslatingConnection(self._connect(), self.translator)

    def interrupt(self, conn: Connection) -> None:
        from tdebench.engines.toolkit.dbapi.drivers import cancel
        from tdebench.engines.toolkit.dbapi.translate import raw_connection

        cancel(self.kind, raw_connection(conn), self._connect)

    def flush_to_disk(self) -> None:
        """Write every dirty page (max dirty pages 0 until none is left), then flush tables."""
        conn = self._connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm")
            pct, lwm = cur.fetchone()
            cur.execute("SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0, innodb_max_dirty_pages_pct = 0")
            try:
                deadline = time.monotonic() + 300
                while time.monotonic() < deadline:
                    cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")
                    if int(cur.fetchone()[1]) == 0:
                        break
                    time.sleep(0.2)
            finally:
                cur.execute(f"SET GLOBAL innodb_max_dirty_pages_pct = {float(pct)}, "
                            f"innodb_max_dirty_pages_pct_lwm = {float(lwm)}")
            cur.execute("FLUSH TABLES")
        finally:
            conn.close()

    def files_outside_scope(self) -> list[str]:
        """Files MySQL cannot encrypt: the system tablespace (ibdata1)."""
        return ["data/ibdata1"]

    def server_pids(self) -> list[int]:
        return self._server.tree_pids() if self._server is not None else []

    def storage_bytes(self) -> int:
        return allocated_bytes(self.datadir)

    # facts -------------------------------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.options)
        out.update(setup.encryption_options(self.config.spec, "skip_log_bin" not in self.options))
        out["listen"] = "127.0.0.1 (tcp)" if self._port else "unix socket only"
        out["keyring"] = "component_keyring_file (own file per instance)" if self.encrypted else "none"
        out["load"] = ", ".join(sorted(self.load_methods)) or "LOAD DATA LOCAL INFILE"
        return out

    def encryption_status(self) -> dict[str, Any]:
        conn = self._connect()
        try:
            finding = probe_mysql_family(conn, list(self.tables))
        finally:
            conn.close()
        return {"enabled": finding.state == "yes", "found": finding.state, "cipher": finding.cipher,
                "tables": finding.tables, "details": finding.details, "notes": finding.notes + finding.errors}

    def check_encrypted(self, schema_tables: list[str]) -> None:
        if not self.encrypted:
            return
        status = self.encryption_status()
        if status["found"] != "yes":
            plain = sorted(t for t, v in status["tables"].items() if not v)
            raise RunFailed(f"{self.config.label} is not encrypted as configured: {status['found']}; plain tables: "
                            f"{', '.join(plain) or '-'}; {redact('; '.join(status['notes']))}",
                            "check the keyring component in the server log")


__all__ = ["MysqlEngine", "MysqlInstance", "find_mysqld"]
