"""The system tables of a new MariaDB instance: ``mariadb-install-db``, or a copy of a template it wrote.

An instance whose bootstrap writes nothing encrypted (plain twins, and ``fs:fscrypt`` ones, whose filesystem encrypts
what is written) copies a template (:mod:`tdebench.engines.toolkit.templates`) keyed by the binaries, the settings
bootstrap reads and the OS user; on a miss ``mariadb-install-db`` writes the template into the instance's datadir
first. The template has the system tables only: the instance's own part (the benchmark user with its password hash,
the benchmark database, a cluster node's SST user) is added by a ``mariadbd --bootstrap`` of its own, reading the
statements from a pipe, as ``mariadb-install-db`` itself does. ``tde:`` twins (bootstrap encrypts the system
tablespace and the redo log with the instance's key), ``fs:gocryptfs`` twins (the datadir is in a mount only the
server's user enters) and Galera nodes run ``mariadb-install-db`` with everything, as before.
"""

from __future__ import annotations

import getpass
import os
import subprocess
from pathlib import Path

from tdebench.encryption import write_secret_file
from tdebench.engines.mariadb import keyplugins
from tdebench.engines.mariadb import settings as ms
from tdebench.engines.mariadb.support import error_lines, native_password_hash
from tdebench.engines.toolkit.process import chown_tree, run_group, tail
from tdebench.engines.toolkit.templates import Template, binary_identity
from tdebench.errors import EnvironmentProblem

BENCH_USER = "bench"
INSTALL_FLAGS = ("--skip-test-db", "--auth-root-authentication-method=socket")
# what mariadb-install-db gives the mariadbd --bootstrap it starts
BOOTSTRAP_FLAGS = ("--bootstrap", "--log-warnings=0", "--enforce-storage-engine=", "--max_allowed_packet=8M",
                   "--net_buffer_length=16K")
# settings that size memory or tune how the running server works, never what bootstrap writes: left out of the key
RUNTIME_ONLY = frozenset({
    "innodb_buffer_pool_size", "innodb_io_capacity", "innodb_io_capacity_max", "innodb_flush_log_at_trx_commit",
    "innodb_log_buffer_size", "innodb_buffer_pool_dump_at_shutdown", "innodb_buffer_pool_load_at_startup",
    "max_connections", "max_allowed_packet", "tmp_table_size", "max_heap_table_size", "query_cache_type",
    "query_cache_size", "innodb_flush_method",
})
BOOTSTRAP_TIMEOUT = 120.0


class MariadbBootstrap:
    """The ``_install`` step of :class:`~tdebench.engines.mariadb.engine.MariadbInstance`."""

    templated = True  # a Galera node says False (wsrep settings, SST user)

    def _install(self) -> None:
        """System tables, the benchmark user (password hash only) and the benchmark database."""
        template = self._template()
        if template is None:
            self._install_db(self._instance_sql())
            return
        os.rmdir(self.datadir)  # made empty by _create; the template copy makes it
        if not template.restore(self.datadir, self.user):
            self.datadir.mkdir(mode=0o700)
            chown_tree(self.datadir, self.user)
            self._install_db("")
            if (self.datadir / "mysql").is_dir():  # what it wrote is a datadir (a stand-in that wrote none is not)
                template.save(self.datadir)
        self._bootstrap(self._instance_sql())

    def _template(self) -> Template | None:
        """The template this instance may start from, or None when its bootstrap is its own."""
        if not self.templated or self.encrypted or self.fs is not None:
            return None
        lines = sorted(line for line in ms.server_lines(self.options) if line.split("=", 1)[0] not in RUNTIME_ONLY)
        user = self.user.pw_name if self.user is not None else getpass.getuser()
        return Template("mariadb", {
            "mariadbd": binary_identity(self.engine.binary("mariadbd")),
            "install_db": binary_identity(self.engine.binary("mariadb-install-db")),
            "settings": lines, "install": INSTALL_FLAGS, "user": user, "env_user": os.environ.get("USER", "")})

    def _instance_sql(self) -> str:
        """The statements that make this instance its own: they hold its password hash, so they never go into a
        template, a command line or a log."""
        priv = ('{"access":18446744073709551615,"plugin":"mysql_native_password",'
                f'"authentication_string":"{native_password_hash(self._password)}"}}')
        hosts = ["localhost"] + (["127.0.0.1"] if self._port else [])
        return ("".join(f"INSERT INTO mysql.global_priv (Host, User, Priv) VALUES ('{h}', '{BENCH_USER}', "
                        f"'{priv}');\n" for h in hosts)
                + f"CREATE DATABASE {self.database};\n" + self._extra_install_sql())

    def _extra_install_sql(self) -> str:
        """More statements for the instance's bootstrap (none here; cluster nodes add their SST user)."""
        return ""

    def _install_db(self, sql: str) -> None:
        """mariadb-install-db, ``sql`` run at its end (from a 0600 file in the transient key directory)."""
        secret_dir = self._secrets()
        extra: list[str] = []
        if sql:
            write_secret_file(secret_dir / "bench-user.sql", sql)  # created 0600, never world-readable
            extra = [f"--extra-file={secret_dir / 'bench-user.sql'}"]
        chown_tree(secret_dir, self.user)
        argv = [str(self.engine.binary("mariadb-install-db")), f"--defaults-file={self._path('my.cnf')}",
                *INSTALL_FLAGS, *extra]
        try:
            self._run_bootstrap("mariadb-install-db", argv, None)
        finally:
            self._forget_secrets()

    def _bootstrap(self, sql: str) -> None:
        """``mariadbd --bootstrap`` running ``sql`` (written to its stdin) on the copied system tables."""
        argv = [str(self.engine.binary("mariadbd")), f"--defaults-file={self._path('my.cnf')}", *BOOTSTRAP_FLAGS]
        self._run_bootstrap("mariadbd --bootstrap", argv, sql.encode())

    def _run_bootstrap(self, name: str, argv: list[str], stdin: bytes | None) -> None:
        log: Path = self._path("install.log")
        try:
            run_group(argv, log, self.user, timeout=BOOTSTRAP_TIMEOUT,
                      env=keyplugins.server_env(self._server_keys()), stdin=stdin)
        except subprocess.TimeoutExpired as exc:
            raise EnvironmentProblem(f"{name} did not finish within {BOOTSTRAP_TIMEOUT:.0f} s; last lines:\n"
                                     f"{tail(log)}", "look at the log above") from exc
        except subprocess.CalledProcessError as exc:
            raise EnvironmentProblem(f"{name} failed (code {exc.returncode}) for {self.config.label}; "
                                     f"errors in its log:\n{error_lines(log)}",
                                     "check the server settings you passed (--server-setting)") from exc
