"""What programs outside tdebench's process need of a running server, and what a backup needs of an embedded
database's file, as capability objects (backup kinds and the ``encrypt`` workload use them).

An instance whose server the engine's own command-line tools reach returns a :class:`ServerAccess` from
:meth:`tdebench.api.engine.Instance.server_access`: :class:`ToolAccess` (how its tools connect),
:class:`ServerFiles` (where the server reads its data, as which OS user), stopping and starting the server alone,
and connections to its other databases. An embedded database that lives in one file returns a
:class:`DatabaseFile` from :meth:`tdebench.api.engine.Instance.database_file`. Both are None where an engine has
none (the default); nothing outside engines/ reads an instance's attributes for them.
"""

from __future__ import annotations

import contextlib
import pwd
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from tdebench.api.connection import Connection

#: the engine's own instance class that a capability object belongs to
InstanceT = TypeVar("InstanceT")


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
    server is stopped with :meth:`ServerAccess.stop`."""

    directory: Path
    user: pwd.struct_passwd | None = None


class ServerAccess(ABC, Generic[InstanceT]):
    """A running server of the engine's own instance class ``InstanceT`` as the engine's own tools and a second
    database reach it. The backup kinds of the tools its dialect names (``Dialect.backup_tools``) use it, and the
    ``encrypt`` workload's TPC-H beside TPC-C (an engine whose switch covers the whole server) connects to a second
    database through it."""

    def __init__(self, instance: InstanceT) -> None:
        #: the instance whose server this is (the engine's own class)
        self.instance = instance

    @abstractmethod
    def tools(self) -> contextlib.AbstractContextManager[ToolAccess]:
        """While the block runs, how the engine's own command-line tools reach this server (credentials are handed
        over through a pipe or a 0600 file that is gone afterwards)."""

    @abstractmethod
    def files(self) -> ServerFiles:
        """Where the running server reads its data and as which OS user (physical restores)."""

    @abstractmethod
    def connect_to(self, database: str) -> Connection:
        """An autocommit connection to another database of the same server (``CREATE DATABASE`` and restores into
        it), created on first use where the engine does that itself."""

    def stop(self) -> None:
        """Stop the server process only, leaving :meth:`files` in place (an encrypted mount stays mounted) for a
        physical restore. Default: the instance's ``stop``."""
        self.instance.stop()  # type: ignore[attr-defined]

    def start(self) -> None:
        """Start the server stopped by :meth:`stop`. Default: the instance's ``start``."""
        self.instance.start()  # type: ignore[attr-defined]

    @contextlib.contextmanager
    def key_material(self) -> Iterator[None]:
        """While the block runs, the key is where the engine's own tools outside the server expect it (e.g.
        ``mariadb-backup`` loading the key plugin itself); removed afterwards. Default: none is needed."""
        yield


@dataclass(frozen=True)
class DatabaseFile:
    """The one file an embedded database lives in, and how to open a second file the way it is opened (the backup
    API copies pages into a connection with the source's key and settings)."""

    path: Path
    #: a connection to another database file with the instance's key and settings
    connect: Callable[[Path], Connection]
