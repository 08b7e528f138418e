"""What an instance's SQL and driver can do, as typed flags (after BenchBase's ``DatabaseType``).

Workloads branch on these values, never on engine names. ``family`` names which of the SQL texts that workloads
write (``sqlite``, ``mariadb``, ``postgres``: each workload keeps canonical SQL plus per-family variants) the
instance accepts; an instance that rewrites statements for another server (external targets, MySQL) accepts the
``postgres`` family and says ``translated``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Family = Literal["sqlite", "mariadb", "postgres"]
FAMILIES: tuple[Family, ...] = ("sqlite", "mariadb", "postgres")

StorageCatalog = Literal["dbstat", "information_schema", "pg_class", "none"]
ProcedureLanguage = Literal["sql/psm", "plpgsql"]


@dataclass(frozen=True)
class Dialect:
    """The SQL and driver capabilities of one instance."""

    family: Family
    #: the product that runs the SQL, for messages and the manifest (e.g. "MariaDB", "MySQL", "SQL Server")
    product: str
    #: how other programs reach the server: ``mysql`` or ``postgres`` wire protocol, ``tds`` (SQL Server),
    #: ``oracle``; ``embedded`` for a library in tdebench's own process (sysbench picks its driver by this)
    protocol: str
    #: DB-API parameter markers the connection takes: ``qmark`` (?), ``format`` (%s)
    paramstyle: Literal["qmark", "format"]
    #: the driver binds and returns ``decimal.Decimal`` and ``datetime.date`` values; False: decimals are REAL
    #: (float) and dates ISO text (SQLite)
    typed_values: bool = True
    #: connections run in autocommit: a workload opens each write transaction with ``begin_sql`` itself
    autocommit: bool = False
    begin_sql: str = "BEGIN"
    #: ``SELECT ... FOR UPDATE`` takes row locks
    row_locks: bool = True
    #: stored procedures can be created, in this language; None: none
    procedure_language: ProcedureLanguage | None = None
    #: statement that sets how long a statement waits for a lock (``{seconds}``, at least 1, or
    #: ``{milliseconds}`` is filled in); None: none
    lock_timeout_sql: str | None = None
    #: where table and index sizes are read: SQLite's dbstat, information_schema.TABLES, PostgreSQL's pg_class
    storage_catalog: StorageCatalog = "none"
    #: the engine's bulk-load path, for the manifest
    bulk_load: str = "INSERT"
    #: statements are rewritten for the server on the way (canonical ``postgres`` SQL in, the server's out)
    translated: bool = False
    #: the server's own SQL dialect when ``translated`` (mysql, mariadb, postgres, tsql, oracle)
    target: str = ""
    #: backup tools the engine's instances work with (the backup workload picks its kinds by these)
    backup_tools: tuple[str, ...] = ()
    #: prefix that has the server plan a statement (SELECT, INSERT, UPDATE, DELETE) without running it, so a
    #: workload can show before any load that its statements run there; None: the server has none
    explain_prefix: str | None = "EXPLAIN "

    def lock_timeout(self, seconds: float) -> str | None:
        """The statement that sets the lock wait to ``seconds``, or None when the dialect has none."""
        if self.lock_timeout_sql is None:
            return None
        return self.lock_timeout_sql.format(seconds=max(1, round(seconds)), milliseconds=int(seconds * 1000))


SQLITE = Dialect("sqlite", "SQLite", "embedded", "qmark", typed_values=False, autocommit=True, row_locks=False,
                 begin_sql="BEGIN IMMEDIATE",  # take the write lock now, not at the first write
                 lock_timeout_sql="PRAGMA busy_timeout = {milliseconds}",
                 storage_catalog="dbstat", bulk_load="executemany in one transaction",
                 backup_tools=("sqlite-backup-api", "sqlite-dump"))
MARIADB = Dialect("mariadb", "MariaDB", "mysql", "format", procedure_language="sql/psm",
                  lock_timeout_sql="SET SESSION innodb_lock_wait_timeout = {seconds}",
                  storage_catalog="information_schema", bulk_load="LOAD DATA LOCAL INFILE",
                  backup_tools=("mariadb-backup", "mariadb-dump"))
POSTGRES = Dialect("postgres", "PostgreSQL", "postgres", "format", procedure_language="plpgsql",
                   lock_timeout_sql="SET lock_timeout = '{milliseconds}ms'", storage_catalog="pg_class",
                   bulk_load="COPY FROM STDIN", backup_tools=("pg_basebackup", "pg_dump"))
