"""One private PostgreSQL cluster: binaries, initdb, configuration, start/stop, connections.

The cluster runs as the unprivileged service user when tdebench runs as root
(:func:`tdebench.engines.toolkit.process.service_user`), listens on a Unix socket in a private 0700
directory (plus 127.0.0.1 on a free port with ``Config.tcp``), and admits one superuser role,
``tdebench``, with a generated password (SCRAM-SHA-256) that lives in memory only: initdb reads it
from a 0600 file in a private temporary directory which is deleted right after, or, for a cluster copied from a
bootstrap template (:mod:`tdebench.engines.postgres.bootstrap`), ``postgres --single`` sets its verifier.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tdebench.encryption import generate_password, redact
from tdebench.engines.postgres import bootstrap
from tdebench.engines.toolkit import asuser
from tdebench.engines.toolkit.fsencrypt import temp_secret_file
from tdebench.engines.toolkit.process import (ServerProcess, chown_tree, find_binary, free_port, own_path,
                                              run_group)
from tdebench.errors import EnvironmentProblem, UsageError

PACKAGES = "postgresql postgresql-contrib"
ROLE = "tdebench"
# Benchmark defaults, identical for every twin; each can be overridden with --server-setting.
DEFAULTS: dict[str, str] = {
    "shared_buffers": "512MB",
    "work_mem": "64MB",
    "maintenance_work_mem": "256MB",
    "effective_cache_size": "4GB",
    "max_wal_size": "4GB",
    "checkpoint_timeout": "15min",
    "max_connections": "50",
    "max_parallel_workers_per_gather": "2",
    "jit": "off",
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "autovacuum": "on",
    "timezone": "UTC",
}
# Set by tdebench, never by the user: where the server listens and what it may log (the column key
# travels as a bound parameter, and parameters are never logged with these settings). Statement logging
# itself (log_statement, log_min_duration_statement) is the user's to turn on, as users do: the threat
# model scans that log (docs/security.md); PostgreSQL's defaults (none, -1) apply otherwise.
FIXED: dict[str, str] = {
    "listen_addresses": "",
    "unix_socket_permissions": "0700",
    "password_encryption": "scram-sha-256",
    "logging_collector": "off",
    "log_destination": "stderr",
    "log_line_prefix": "%m [%p] ",
    "log_timezone": "UTC",
    "log_min_duration_sample": "-1",
    "log_transaction_sample_rate": "0",
    "log_parameter_max_length": "0",
    "log_parameter_max_length_on_error": "0",
    "log_connections": "off",
    "log_disconnections": "off",
}
_NOT_SETTABLE = set(FIXED) | {"port", "unix_socket_directories", "data_directory", "hba_file", "ident_file",
                              "config_file", "external_pid_file", "ssl"}
_GUC_NAME = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$")
_SOCKET_MAX = 100  # sun_path holds 108 bytes
INITDB_FLAGS = ("--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "--locale=C", "--encoding=UTF8",
                "--no-instructions", "--no-sync")


# binaries -----------------------------------------------------------------------------------
def find_bindir() -> Path:
    """Newest ``/usr/lib/postgresql/<v>/bin`` holding postgres and initdb, else ``pg_config --bindir``."""
    tried: list[str] = []
    root = Path("/usr/lib/postgresql")
    versions = sorted((p for p in root.glob("*/bin")), key=lambda p: _version_key(p.parent.name), reverse=True) \
        if root.is_dir() else []
    for bindir in versions:
        tried.append(str(bindir))
        if (bindir / "postgres").is_file() and (bindir / "initdb").is_file():
            return bindir
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        bindir = Path(out.stdout.strip())
        tried.append(f"pg_config --bindir ({bindir})")
        if (bindir / "postgres").is_file() and (bindir / "initdb").is_file():
            return bindir
    raise EnvironmentProblem("cannot find the PostgreSQL server binaries (postgres, initdb)",
                             f"install the Debian packages {PACKAGES} (apt-get install {PACKAGES})", tried)


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)) or (0,)


def binary(bindir: Path, name: str) -> Path:
    return find_binary([name], [bindir], PACKAGES)


def server_version(bindir: Path) -> str:
    """``PostgreSQL 15.18 (Debian 15.18-0+deb12u1)``."""
    out = subprocess.run([str(binary(bindir, "postgres")), "--version"], capture_output=True, text=True, check=False)
    text = out.stdout.strip()
    return re.sub(r"^postgres \(PostgreSQL\)", "PostgreSQL", text) or "PostgreSQL (unknown version)"


def extension_available(bindir: Path, name: str) -> bool:
    """True if ``<sharedir>/extension/<name>.control`` exists."""
    candidates = []
    pg_config = bindir / "pg_config"
    if pg_config.is_file():
        out = subprocess.run([str(pg_config), "--sharedir"], capture_output=True, text=True, check=False)
        if out.stdout.strip():
            candidates.append(Path(out.stdout.strip()))
    candidates.append(Path("/usr/share/postgresql") / bindir.parent.name)
    return any((d / "extension" / f"{name}.control").is_file() for d in candidates)


# settings -----------------------------------------------------------------------------------
def validate_gucs(settings: dict[str, str]) -> None:
    """UsageError for names that are not PostgreSQL settings or that tdebench controls itself."""
    for key, value in settings.items():
        if not _GUC_NAME.match(key):
            raise UsageError(f"'{key}' is not a PostgreSQL setting name", "use e.g. --server-setting work_mem=128MB")
        if key in _NOT_SETTABLE:
            raise UsageError(f"the PostgreSQL setting '{key}' is controlled by tdebench",
                             f"leave it out; tdebench-controlled settings: {', '.join(sorted(_NOT_SETTABLE))}")
        if any(c in str(value) for c in "\n\r\0"):
            raise UsageError(f"bad value for PostgreSQL setting '{key}'", "give a single-line value")


def _conf_value(value: str) -> str:
    return "'" + str(value).replace("\\", "\\\\").replace("'", "''") + "'"


# the cluster ------------------------------------------------------------------------------------
class PgCluster:
    """initdb, configuration, start/stop and connections of one private cluster."""

    def __init__(self, bindir: Path, home: Path, pgdata: Path, settings: dict[str, str], tcp: bool,
                 user: pwd.struct_passwd | None, database: str, templated: bool = False) -> None:
        self.database = database  # the benchmark database
        self.templated = templated  # initdb copies a template (pgdata is writable by us, not in a FUSE mount)
        self.bindir = bindir
        self.home = home
        self.pgdata = pgdata
        self.user = user
        self.gucs = {**DEFAULTS, **settings}
        self.tcp = tcp
        self.port = free_port() if tcp else 5432
        self.log_path = home / "postgres.log"
        self.password = generate_password(24)
        self.socket_dir = self._pick_socket_dir()
        self._server: ServerProcess | None = None

    def _pick_socket_dir(self) -> Path:
        inside = self.home / "run"
        if len(f"{inside}/.s.PGSQL.{self.port}") <= _SOCKET_MAX:
            return inside
        # deep work dir: a short private path instead, recorded at once for `tdebench cleanup`
        return own_path(Path(tempfile.mkdtemp(prefix="tdebench-pg-")))

    @property
    def private_socket_dir(self) -> bool:
        """True when the socket lives outside ``home`` (removed by :meth:`cleanup`)."""
        return self.home not in self.socket_dir.parents

    # creation -----------------------------------------------------------------------------------
    def initialized(self) -> bool:
        return asuser.is_file(self.user, self.pgdata / "PG_VERSION")

    def initdb(self) -> None:
        """Create the cluster (C locale, UTF8, SCRAM auth) and write the configuration: a copy of the template of
        initdb with the instance's password set (:mod:`.bootstrap`), or initdb itself when not ``templated``.

        ``--no-sync`` saves seconds per instance (more on gocryptfs); a fresh benchmark cluster has
        nothing to lose in a crash, and every later write is synced as PostgreSQL always does.
        """
        self.socket_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.socket_dir, 0o700)
        chown_tree(self.socket_dir, self.user)
        if not self.templated:
            self._initdb(self.password)
        else:
            template = bootstrap.template(self.bindir, ROLE, INITDB_FLAGS, self.user)
            if not template.restore(self.pgdata, self.user):
                self._initdb(generate_password(24))  # a throwaway: the instance's password is set next
                if (self.pgdata / "PG_VERSION").is_file():
                    template.save(self.pgdata)
            self._set_password()
        self.write_conf()

    def _initdb(self, password: str) -> None:
        owner = self.user.pw_uid if self.user else None
        with temp_secret_file(password, owner=owner) as pwfile:
            argv = [str(binary(self.bindir, "initdb")), "-D", str(self.pgdata), "-U", ROLE, f"--pwfile={pwfile}",
                    *INITDB_FLAGS]
            result = self._run_as_user(argv)
        if result.returncode != 0:
            raise EnvironmentProblem(f"initdb failed (code {result.returncode}): "
                                     f"{redact((result.stdout + result.stderr).strip())[-600:]}",
                                     f"check that {self.pgdata.parent} is writable and has free space")

    def _set_password(self) -> None:
        """The instance's password for the role, by ``postgres --single`` on the stopped cluster."""
        argv = bootstrap.single_user_argv(binary(self.bindir, "postgres"), self.pgdata)
        result = self._run_as_user(argv, bootstrap.password_statement(ROLE, self.password))
        if result.returncode != 0 or "ERROR:" in result.stderr:
            raise EnvironmentProblem(f"setting the password of the new cluster failed (code {result.returncode}): "
                                     f"{redact(result.stderr.strip())[-600:]}",
                                     f"check that {self.pgdata.parent} is writable and has free space")

    def _run_as_user(self, argv: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run a helper (initdb, ``postgres --single``) as the cluster's user, with its output captured. It runs in a
        process group of its own, ended and waited for on an interrupt: the server processes initdb starts would
        otherwise go on writing into the data directory as the run removes it."""
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "LANG": "C", "HOME": str(self.home), "TZ": "UTC"}
        done = run_group(argv, None, self.user, None, env=env, stdin=None if stdin is None else stdin.encode(),
                         cwd=self.home, check=False)
        return subprocess.CompletedProcess(argv, done.returncode, done.stdout.decode(errors="replace"),
                                           done.stderr.decode(errors="replace"))

    def conf_lines(self) -> list[str]:
        listen = {"listen_addresses": "127.0.0.1" if self.tcp else "", "port": str(self.port),
                  "unix_socket_directories": str(self.socket_dir)}
        merged = {**self.gucs, **FIXED, **listen}
        return ["# written by tdebench; identical for every twin except the listen settings"] + [
            f"{key} = {_conf_value(value)}" for key, value in merged.items()]

    def write_conf(self) -> None:
        """tdebench.conf, included from postgresql.conf; written as the server's user (a gocryptfs mount
        admits no one else)."""
        asuser.write_text(self.user, self.pgdata / "tdebench.conf", "\n".join(self.conf_lines()) + "\n")
        main = self.pgdata / "postgresql.conf"
        text = asuser.read_text(self.user, main)
        if "include 'tdebench.conf'" not in text:
            asuser.write_text(self.user, main, text + "\ninclude 'tdebench.conf'\n")

    # running --------------------------------------------------------------------------------------
    def running(self) -> bool:
        return self._server is not None and self._server.running()

    def start(self, timeout: float = 90.0) -> None:
        if self.running():
            return
        self.socket_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        chown_tree(self.socket_dir, self.user)
        self._server = ServerProcess(
            "postgres", [str(binary(self.bindir, "postgres")), "-D", str(self.pgdata)], self.log_path,
            self.home / "postgres.pid", user=self.user,
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C", "LANG": "C", "TZ": "UTC"})
        self._server.start(self._ready, timeout=timeout)

    def _ready(self) -> bool:
        self.connect("postgres", connect_timeout=2).close()
        return True

    def stop(self) -> None:
        """Fast shutdown (SIGINT, what ``pg_ctl stop -m fast`` sends), then SIGTERM/SIGKILL of the tree."""
        if self._server is None:
            return
        server = self._server

        def fast() -> None:
            if server.proc is not None:
                server.proc.send_signal(signal.SIGINT)

        server.stop(graceful=fast, timeout=60.0)
        self._server = None

    def pids(self) -> list[int]:
        return self._server.tree_pids() if self._server is not None else []

    def cleanup(self) -> None:
        """Remove the socket directory if it lives outside ``home``."""
        if self.private_socket_dir:
            shutil.rmtree(self.socket_dir, ignore_errors=True)

    # connections ------------------------------------------------------------------------------------
    def connect(self, dbname: str | None = None, connect_timeout: int = 10, autocommit: bool = False) -> Any:
        """A connection to ``dbname`` (default: the benchmark database)."""
        import psycopg

        dbname = dbname or self.database

        host = "127.0.0.1" if self.tcp else str(self.socket_dir)
        return psycopg.connect(host=host, port=self.port, user=ROLE, password=self.password, dbname=dbname,
                               connect_timeout=connect_timeout, autocommit=autocommit,
                               application_name="tdebench")

    def create_database(self, extensions: tuple[str, ...] = ()) -> None:
        """Create the benchmark database (first start) and the given extensions in it."""
        with self.connect("postgres", autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [self.database]).fetchone()
            if not exists:
                conn.execute(f"CREATE DATABASE {self.database}")
        if extensions:
            with self.connect(autocommit=True) as conn:
                for name in extensions:
                    conn.execute(f"CREATE EXTENSION IF NOT EXISTS {name}")

    def effective_settings(self, names: list[str]) -> dict[str, str]:
        """Values as the running server reports them (``pg_settings``), with units."""
        with self.connect("postgres", autocommit=True) as conn:
            rows = conn.execute("SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)",
                                [names]).fetchall()
        return {name: value for name, value in rows}
