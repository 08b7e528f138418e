"""What an instance's SQL and driver can do, as typed flags (after BenchBase's ``DatabaseType``).

Workloads branch on these values, never on engine names. ``family`` names which of the SQL texts that workloads
write (``sqlite``, ``mariadb``, ``postgres``: each workload keeps canonical SQL plus per-family variants) the
instance accepts; an instance that rewrites statements for another server (external targets, MySQL) accepts the
``postgres`` family and says ``translated``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

from tdebench.api.tables import KINDS, ColumnSpec, parse_type

Family = Literal["sqlite", "mariadb", "postgres"]
FAMILIES: tuple[Family, ...] = ("sqlite", "mariadb", "postgres")

StorageCatalog = Literal["dbstat", "information_schema", "pg_class", "none"]
ProcedureLanguage = Literal["sql/psm", "plpgsql"]


@dataclass(frozen=True)
class ColumnTypes:
    """How a dialect writes each portable column kind of :mod:`tdebench.api.tables` (``{}``: the length, or
    precision and scale, when the type has them). The one mapping of types every workload's DDL uses."""

    int: str = "INTEGER"
    bigint: str = "BIGINT"
    decimal: str = "NUMERIC({})"
    float: str = "DOUBLE PRECISION"
    char: str = "CHAR({})"
    varchar: str = "VARCHAR({})"
    text: str = "TEXT"
    date: str = "DATE"
    timestamp: str = "TIMESTAMP"
    bool: str = "BOOLEAN"

    def sql(self, portable: str) -> str:
        """``decimal(15,2)`` -> e.g. ``NUMERIC(15,2)``; ValueError for an unknown type."""
        kind, size = parse_type(portable)
        text: str = getattr(self, kind)
        return text.format(",".join(map(str, size))) if "{}" in text else text


#: canonical SQL's types (PostgreSQL's), also what translated dialects read
CANONICAL_TYPES = ColumnTypes()
SQLITE_TYPES = ColumnTypes(bigint="INTEGER", decimal="REAL", float="REAL", char="TEXT", varchar="TEXT", date="TEXT",
                           timestamp="TEXT", bool="INTEGER")
MARIADB_TYPES = ColumnTypes(int="INT", decimal="DECIMAL({})", float="DOUBLE", timestamp="DATETIME")

assert {f.name for f in fields(ColumnTypes)} == set(KINDS), "ColumnTypes names every portable kind"


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
    #: statement that waits until the work an untimed undo left behind is done (MariaDB: the purge of the rows it
    #: deleted), so that the next timed write does not meet it; None: none
    settle_sql: str | None = None
    #: query of one integer, the work ``settle_sql`` waits for that is still left (MariaDB: the purge's history
    #: length), read between short sleeps while another connection runs ``settle_sql``; None: none
    settle_pending_sql: str | None = None
    #: where table and index sizes are read: SQLite's dbstat, information_schema.TABLES, PostgreSQL's pg_class
    storage_catalog: StorageCatalog = "none"
    #: the engine's bulk-load path, for the manifest
    bulk_load: str = "INSERT"
    #: statements are rewritten for the server on the way (canonical ``postgres`` SQL in, the server's out)
    translated: bool = False
    #: the server's own SQL dialect when ``translated`` (mysql, mariadb, postgres, tsql, oracle)
    target: str = ""
    #: other processes (forked workers such as TPC-C's virtual users) can open connections of their own; False for
    #: a library whose database lives in one process (DuckDB)
    multi_process: bool = True
    #: a cursor's ``rowcount`` after ``INSERT ... SELECT`` or ``DELETE`` is the number of rows it changed; False: the
    #: driver reports -1 (DuckDB), and a workload that checks the rows a statement changed counts them itself
    rowcount: bool = True
    #: backup tools the engine's instances work with (the backup workload picks its kinds by these)
    backup_tools: tuple[str, ...] = ()
    #: several connections write at once; False: one writer at a time, the others wait (SQLite)
    concurrent_writes: bool = True
    # DDL: the defaults are canonical SQL's (what translated dialects read) ---------------------------------
    #: column types of the family's SQL
    types: ColumnTypes = CANONICAL_TYPES
    #: options after every CREATE TABLE's closing parenthesis (MariaDB: the storage engine)
    table_options: str = ""
    #: the table option that stores text as UTF-8 when the server's default may be another
    utf8_table_option: str = ""
    #: the option that stores a table with a primary key in key order (SQLite: WITHOUT ROWID); "" when every
    #: such table is (InnoDB) or none can be
    clustered_table_option: str = ""
    #: ALTER TABLE can add primary and foreign keys after the load; False (SQLite): primary keys become unique
    #: indexes, foreign keys are left out
    alter_adds_keys: bool = True
    #: every ALTER TABLE rebuilds its table (MariaDB): a workload adds a table's keys and indexes in one statement
    alter_rebuilds: bool = False
    #: unique lookup keys are declared in CREATE TABLE, and no secondary index is added after the load: column
    #: encryption (PostgreSQL's pgcrypto) then keeps them plaintext and indexed for every twin alike
    inline_unique_keys: bool = True
    #: a date literal (``{}``: ``YYYY-MM-DD``)
    date_literal: str = "date '{}'"
    #: the bytes of a text value as stored, UTF-8 (``{}``: the expression)
    octet_length: str = "OCTET_LENGTH({})"
    #: prefix that has the server plan a statement (SELECT, INSERT, UPDATE, DELETE) without running it, so a
    #: workload can show before any load that its statements run there; None: the server has none
    explain_prefix: str | None = "EXPLAIN "

    def lock_timeout(self, seconds: float) -> str | None:
        """The statement that sets the lock wait to ``seconds``, or None when the dialect has none."""
        if self.lock_timeout_sql is None:
            return None
        return self.lock_timeout_sql.format(seconds=max(1, round(seconds)), milliseconds=int(seconds * 1000))

    def column_sql(self, column: ColumnSpec) -> str:
        """``name TYPE NOT NULL`` (or ``NULL``) for one column in this dialect."""
        return f"{column.name} {self.types.sql(column.type)} {'NULL' if column.nullable else 'NOT NULL'}"

    def create_table_options(self, *extra: str, clustered: bool = False) -> str:
        """What follows a CREATE TABLE's closing parenthesis (with a leading space), or ""."""
        parts = [self.table_options, self.clustered_table_option if clustered else "", *extra]
        text = " ".join(p for p in parts if p)
        return f" {text}" if text else ""


SQLITE = Dialect("sqlite", "SQLite", "embedded", "qmark", typed_values=False, autocommit=True, row_locks=False,
                 begin_sql="BEGIN IMMEDIATE",  # take the write lock now, not at the first write
                 lock_timeout_sql="PRAGMA busy_timeout = {milliseconds}",
                 storage_catalog="dbstat", bulk_load="executemany in one transaction",
                 backup_tools=("sqlite-backup-api", "sqlite-dump"), concurrent_writes=False,
                 types=SQLITE_TYPES, clustered_table_option="WITHOUT ROWID", alter_adds_keys=False,
                 inline_unique_keys=False, date_literal="'{}'", octet_length="LENGTH(CAST({} AS BLOB))")
MARIADB = Dialect("mariadb", "MariaDB", "mysql", "format", procedure_language="sql/psm",
                  lock_timeout_sql="SET SESSION innodb_lock_wait_timeout = {seconds}",
                  settle_sql="SET GLOBAL innodb_max_purge_lag_wait = 0",
                  settle_pending_sql="SELECT count FROM information_schema.INNODB_METRICS"
                                     " WHERE name = 'trx_rseg_history_len'",
                  storage_catalog="information_schema", bulk_load="LOAD DATA LOCAL INFILE",
                  backup_tools=("mariadb-backup", "mariadb-dump"), types=MARIADB_TYPES,
                  table_options="ENGINE=InnoDB", utf8_table_option="DEFAULT CHARSET=utf8mb4", alter_rebuilds=True,
                  inline_unique_keys=False)
POSTGRES = Dialect("postgres", "PostgreSQL", "postgres", "format", procedure_language="plpgsql",
                   lock_timeout_sql="SET lock_timeout = '{milliseconds}ms'", storage_catalog="pg_class",
                   bulk_load="COPY FROM STDIN", backup_tools=("pg_basebackup", "pg_dump"))

#: the dialect whose SQL each family's texts are written in (the one lookup from a family name)
BY_FAMILY: dict[str, Dialect] = {d.family: d for d in (SQLITE, MARIADB, POSTGRES)}


def as_dialect(dialect: Dialect | str) -> Dialect:
    """``dialect`` itself, or the dialect of the family it names; ValueError naming the families otherwise."""
    if isinstance(dialect, Dialect):
        return dialect
    if dialect not in BY_FAMILY:
        raise ValueError(f"unknown SQL dialect {dialect!r}; known: {', '.join(FAMILIES)}")
    return BY_FAMILY[dialect]
