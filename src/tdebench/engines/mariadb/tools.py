"""MariaDB's own command-line tools (mariadb-backup, mariadb-dump, mbstream, the client) for a running instance:
the :class:`~tdebench.api.server.ServerAccess` that :meth:`tdebench.engines.mariadb.engine.MariadbInstance.
server_access` returns."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tdebench.api.server import ServerAccess, ServerFiles, ToolAccess
from tdebench.engines.toolkit.process import find_binary
from tdebench.errors import RunFailed

BIN_DIRS = (Path("/usr/bin"), Path("/usr/local/mysql/bin"))
#: a tool's name -> the names it has had, newest first
_NAMES = {"mariadb-backup": ("mariadb-backup", "mariabackup"), "mariadb-dump": ("mariadb-dump", "mysqldump"),
          "mbstream": ("mbstream",), "mariadb": ("mariadb", "mysql")}
_BACKUP_PACKAGE = "mariadb-backup"


def tool_path(name: str) -> str:
    """Where MariaDB's tool ``name`` is; EnvironmentProblem naming the package to install otherwise."""
    package = _BACKUP_PACKAGE if name in ("mariadb-backup", "mbstream") else "mariadb-client"
    return str(find_binary(_NAMES.get(name, (name,)), BIN_DIRS, package))


class MariadbServerAccess(ServerAccess[Any]):
    """A MariaDB instance's server: its tools connect as the benchmark user, the password in an inherited in-memory
    file. Under gocryptfs they run as the server's OS user, the only one the mount admits."""

    @contextlib.contextmanager
    def tools(self) -> Iterator[ToolAccess]:
        argv, fd = self.instance.client_argv()
        runs_as = self.instance.fs.owner if self.instance.fs is not None else None
        try:
            if runs_as is not None:  # the tool reopens /dev/fd/N: the in-memory file must be its user's (0600)
                os.fchown(fd, runs_as.pw_uid, runs_as.pw_gid)
            options = tuple(a for a in argv if a.startswith(("--defaults-extra-file=", "--socket=", "--host=",
                                                               "--port=")))
            yield ToolAccess(tool_path, options, pass_fds=(fd,), runs_as=runs_as)
        finally:
            os.close(fd)

    def files(self) -> ServerFiles:
        return ServerFiles(self.instance.datadir, self.instance.user)

    def stop(self) -> None:
        """The server only: a gocryptfs mount stays mounted, so a physical restore writes inside it."""
        self.instance.stop_server()

    def connect_to(self, database: str) -> Any:
        """An autocommit connection to ``database`` of this server, created if missing (a restore's target; data
        the ``encrypt`` workload loads beside its own, switched with it: :attr:`Switcher.whole_server
        <tdebench.api.switcher.Switcher.whole_server>`)."""
        if not database.isidentifier():
            raise RunFailed(f"bad database name {database!r}", "use letters, digits and _ only")
        conn = self.instance._connect(timeout=10, use_database=False)
        try:
            cur = conn.cursor()
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
            cur.execute(f"USE `{database}`")
            conn.autocommit(True)
        except Exception:
            conn.close()
            raise
        return conn

    def key_material(self) -> contextlib.AbstractContextManager[None]:
        """The file key at ``keys/filekey`` while the block runs (``mariadb-backup --backup/--prepare`` loads the key
        plugin itself); nothing for a plain instance."""
        return self.instance.key_material()
