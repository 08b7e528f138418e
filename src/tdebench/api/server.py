"""What programs outside tdebench's process need of a running server (backup kinds use it).

An engine whose instances are servers hands out :class:`ToolAccess` (how its own command-line tools connect) and
:class:`ServerFiles` (where the server reads its data, as which OS user) through the hooks of
:class:`~tdebench.api.engine.Instance`; nothing outside engines/ reads an instance's attributes for them.
"""

from __future__ import annotations

import pwd
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class ToolAccess:
    """How the engine's own client tools (dump, backup, SQL client) reach the running server."""

    #: the path of one of the engine's tools by its name (e.g. ``pg_dump``, ``mariadb-backup``);
    #: EnvironmentProblem naming the package to install when it is missing
    tool: Callable[[str], str]
    #: options every client tool of the server takes first: credentials and where the server listens
    options: tuple[str, ...] = ()
    #: environment variables the tools read (e.g. PGHOST, PGPASSFILE)
    env: Mapping[str, str] = field(default_factory=dict)
    #: file descriptors the tools inherit (e.g. an in-memory file holding the password)
    pass_fds: tuple[int, ...] = ()
    #: the OS user the tools that read or write the server's files run as: the server's, when those files are in a
    #: mount that admits only that user (gocryptfs); None: tdebench's own user
    runs_as: pwd.struct_passwd | None = None

    def argv(self, name: str, *args: str) -> list[str]:
        """``name``'s command line with the connection options first."""
        return [self.tool(name), *self.options, *args]


@dataclass(frozen=True)
class ServerFiles:
    """Where a server reads its data from while it runs (the plaintext view, inside an encrypted mount) and the
    OS user those files belong to (None: tdebench's own user). Physical restores replace this directory while the
    server is stopped with :meth:`~tdebench.api.engine.Instance.stop_server`."""

    directory: Path
    user: pwd.struct_passwd | None = None
