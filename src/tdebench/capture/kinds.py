"""What capture needs to know of each kind of source, as values: the SQL family its statements are written in,
sqlglot's dialect for them, how identifiers are quoted, how a read-only transaction is opened, whether it is a
server (privileges, statistics) or a file. The code branches on these, not on product names."""

from __future__ import annotations

from dataclasses import dataclass

from tdebench.sqltext.dialects import family_sqlglot


@dataclass(frozen=True)
class SourceKind:
    product: str
    #: the sql workload family its SQL is (workload.toml ``dialect`` of a capture)
    family: str
    #: identifier quote
    quote: str
    #: opens a read-only transaction; "" when the connection itself is read-only (PostgreSQL's psycopg, SQLite)
    begin_read_only: str
    #: a server: privileges, statement statistics, a database in the URL
    server: bool
    #: URL schemes (``tdebench run --target``'s) that name it
    schemes: tuple[str, ...] = ()
    #: its digest texts write a long IN list as ``(...)``
    digest_ellipsis: bool = False
    #: how its server-side cursor is made: ``unbuffered`` (PyMySQL's SSCursor), ``named`` (psycopg), ``plain``
    cursor: str = "plain"
    #: it keeps a history of statements with their values (MariaDB/MySQL: events_statements_history_long)
    history: bool = False

    @property
    def sqlglot(self) -> str:
        """sqlglot's dialect for its statements, logs and digests (its family's)."""
        return family_sqlglot(self.family)

    def ident(self, name: str) -> str:
        return f"{self.quote}{name.replace(self.quote, self.quote * 2)}{self.quote}"


MYSQL = SourceKind("MariaDB/MySQL", "mariadb", "`", "START TRANSACTION READ ONLY", True,
                   ("mysql", "mariadb"), digest_ellipsis=True, cursor="unbuffered", history=True)
POSTGRES = SourceKind("PostgreSQL", "postgres", '"', "", True, ("postgresql",), cursor="named")
SQLITE = SourceKind("SQLite", "sqlite", '"', "", False)
KINDS = (MYSQL, POSTGRES, SQLITE)


def by_scheme(scheme: str) -> SourceKind | None:
    return next((k for k in KINDS if scheme in k.schemes), None)
