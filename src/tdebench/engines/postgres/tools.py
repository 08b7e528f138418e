"""PostgreSQL's own command-line tools (pg_basebackup, pg_dump, psql) for a running instance, and what a physical
restore needs: the :class:`~tdebench.api.server.ServerAccess` that
:meth:`tdebench.engines.postgres.instance.PostgresInstance.server_access` returns. The password reaches the tools
through ``PGPASSFILE``: a 0600 file in a fresh 0700 directory, removed when the block ends."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tdebench.api.engine import Connection
from tdebench.api.server import ServerAccess, ServerFiles, ToolAccess
from tdebench.engines.toolkit.fsencrypt import temp_secret_file
from tdebench.engines.postgres.server import ROLE


class PostgresServerAccess(ServerAccess[Any]):
    """A PostgreSQL instance's server (its ``pgcluster`` and ``bindir``)."""

    @contextlib.contextmanager
    def tools(self) -> Iterator[ToolAccess]:
        cluster, bindir = self.instance.pgcluster, self.instance.bindir
        host = "127.0.0.1" if cluster.tcp else str(cluster.socket_dir)
        with temp_secret_file(f"*:*:*:{ROLE}:{cluster.password}\n") as passfile:
            yield ToolAccess(lambda name: str(Path(bindir) / name),
                             env={"PGHOST": host, "PGPORT": str(cluster.port), "PGUSER": ROLE,
                                  "PGPASSFILE": str(passfile), "PGAPPNAME": "tdebench-backup"})

    def files(self) -> ServerFiles:
        """The data directory the server runs on (inside the gocryptfs mount for ``fs:*``)."""
        return ServerFiles(self.instance.pgcluster.pgdata, self.instance.pgcluster.user)

    def stop(self) -> None:
        """The server only: a gocryptfs mount stays mounted, so a restore writes inside it."""
        self.instance.pgcluster.stop()

    def start(self) -> None:
        self.instance.pgcluster.start()

    def connect_to(self, database: str) -> Connection:
        return self.instance.pgcluster.connect(database, autocommit=True)
