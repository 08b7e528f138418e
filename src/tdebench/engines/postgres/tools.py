"""PostgreSQL's own command-line tools (pg_basebackup, pg_dump, psql) for a running instance, and what a physical
restore needs: the :class:`~tdebench.api.server.ToolAccess` and :class:`~tdebench.api.server.ServerFiles` hooks
of :class:`~tdebench.api.engine.Instance`. The password reaches the tools through ``PGPASSFILE``: a 0600 file in
a fresh 0700 directory, removed when the block ends."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from tdebench.api.engine import Connection
from tdebench.api.server import ServerFiles, ToolAccess
from tdebench.engines.toolkit.fsencrypt import temp_secret_file
from tdebench.engines.postgres.server import ROLE, PgCluster


class PostgresTools:
    """Mixed into the PostgreSQL instance (``cluster``, ``bindir``)."""

    pgcluster: PgCluster
    bindir: Path

    @contextlib.contextmanager
    def tool_access(self) -> Iterator[ToolAccess]:
        cluster = self.pgcluster
        host = "127.0.0.1" if cluster.tcp else str(cluster.socket_dir)
        with temp_secret_file(f"*:*:*:{ROLE}:{cluster.password}\n") as passfile:
            yield ToolAccess(lambda name: str(Path(self.bindir) / name),
                             env={"PGHOST": host, "PGPORT": str(cluster.port), "PGUSER": ROLE,
                                  "PGPASSFILE": str(passfile), "PGAPPNAME": "tdebench-backup"})

    def server_files(self) -> ServerFiles:
        """The data directory the server runs on (inside the gocryptfs mount for ``fs:*``)."""
        return ServerFiles(self.pgcluster.pgdata, self.pgcluster.user)

    def stop_server(self) -> None:
        """The server only: a gocryptfs mount stays mounted, so a restore writes inside it."""
        self.pgcluster.stop()

    def start_server(self) -> None:
        self.pgcluster.start()

    def connect_to(self, database: str) -> Connection:
        return self.pgcluster.connect(database, autocommit=True)
