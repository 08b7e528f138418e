"""MariaDB's own command-line tools (mariadb-backup, mariadb-dump, mbstream, the client) for a running instance:
the :class:`~tdebench.api.server.ToolAccess` and :class:`~tdebench.api.server.ServerFiles` hooks of
:class:`~tdebench.api.engine.Instance`."""

from __future__ import annotations

import contextlib
import os
import pwd
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tdebench.api.server import ServerFiles, ToolAccess
from tdebench.engines.toolkit.process import find_binary

BIN_DIRS = (Path("/usr/bin"), Path("/usr/local/mysql/bin"))
#: a tool's name -> the names it has had, newest first
_NAMES = {"mariadb-backup": ("mariadb-backup", "mariabackup"), "mariadb-dump": ("mariadb-dump", "mysqldump"),
          "mbstream": ("mbstream",), "mariadb": ("mariadb", "mysql")}
_BACKUP_PACKAGE = "mariadb-backup"


def tool_path(name: str) -> str:
    """Where MariaDB's tool ``name`` is; EnvironmentProblem naming the package to install otherwise."""
    package = _BACKUP_PACKAGE if name in ("mariadb-backup", "mbstream") else "mariadb-client"
    return str(find_binary(_NAMES.get(name, (name,)), BIN_DIRS, package))


class MariadbTools:
    """Mixed into the MariaDB instance: its tools connect as the benchmark user, the password in an inherited in-memory file.
    Under gocryptfs they run as the server's OS user, the only one the mount admits."""

    datadir: Path
    user: pwd.struct_passwd | None
    fs: Any

    def client_argv(self) -> tuple[list[str], int]:  # provided by the instance
        raise NotImplementedError

    @contextlib.contextmanager
    def tool_access(self) -> Iterator[ToolAccess]:
        argv, fd = self.client_argv()
        runs_as = self.fs.owner if self.fs is not None else None
        try:
            if runs_as is not None:  # the tool reopens /dev/fd/N: the in-memory file must be its user's (0600)
                os.fchown(fd, runs_as.pw_uid, runs_as.pw_gid)
            options = tuple(a for a in argv if a.startswith(("--defaults-extra-file=", "--socket=", "--host=",
                                                               "--port=")))
            yield ToolAccess(tool_path, options, pass_fds=(fd,), runs_as=runs_as)
        finally:
            os.close(fd)

    def server_files(self) -> ServerFiles:
        return ServerFiles(self.datadir, self.user)
