"""Driver-level work on a server of a :class:`~tdebench.engines.toolkit.dbapi.kinds.Kind`: bulk load, statistics,
sizes, cancel, session facts (connecting is the caller's: external targets, the local MySQL engine).

Drivers are imported lazily so a missing one only matters for the target that needs it: PyMySQL (MySQL,
MariaDB), psycopg (PostgreSQL), pymssql (SQL Server), oracledb (Oracle, thin mode: no Instant Client).

Loading: MySQL/MariaDB ``LOAD DATA LOCAL INFILE`` (as the mariadb engine; falls back to batched INSERTs when
the server has ``local_infile=OFF``), PostgreSQL ``COPY FROM STDIN``, SQL Server and Oracle ``executemany``
batches of typed values (never strings the server would convert by its NLS/language settings).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from tdebench.api.tables import TableSpec, split_line
from tdebench.encryption import redact
from tdebench.engines.toolkit.bulkload import copy_file, load_data_sql
from tdebench.engines.toolkit.dbapi.kinds import Kind, check_driver
from tdebench.errors import RunFailed

BATCH = 10_000
_LOCAL_INFILE_OFF = (1148, 2068, 3948)  # "Loading local data is disabled" / "not allowed"


def driver_module(kind: Kind) -> Any:
    """The kind's driver module, imported now (EnvironmentProblem naming the pip package if missing)."""
    check_driver(kind)
    return importlib.import_module(kind.module)


# loading ----------------------------------------------------------------------------------------------------

_TYPED: dict[str, Callable[[str], Any]] = {"int": int, "bigint": int, "bool": int, "decimal": Decimal,
                                            "float": float, "date": date.fromisoformat,
                                            "timestamp": datetime.fromisoformat}


def _converter(kind: str) -> Callable[[str | None], Any]:
    convert = _TYPED.get(kind)
    if convert is None:
        return lambda text: text
    return lambda text: None if text is None or text == "" else convert(text)


def typed_rows(table: TableSpec, path: Path) -> Iterator[list[Any]]:
    """The rows of a data file as Python values of the column types (escapes resolved, ``\\N`` as None)."""
    converters = [_converter(c.kind) for c in table.columns]
    with open(path, newline="", encoding="utf-8") as handle:
        for line in handle:
            yield [conv(v) for conv, v in zip(converters, split_line(line.rstrip("\n")))]


def insert_batches(raw: Any, table: TableSpec, path: Path, markers: list[str]) -> int:
    """Load ``path`` with ``executemany`` batches of :data:`BATCH` rows; one commit at the end."""
    sql = f"INSERT INTO {table.name} ({', '.join(table.column_names)}) VALUES ({', '.join(markers)})"
    cur = raw.cursor()
    rows, batch = 0, []
    for row in typed_rows(table, path):
        batch.append(row)
        if len(batch) >= BATCH:
            cur.executemany(sql, batch)
            rows, batch = rows + len(batch), []
    if batch:
        cur.executemany(sql, batch)
        rows += len(batch)
    raw.commit()
    return rows


def load_mysql(raw: Any, table: TableSpec, path: Path) -> tuple[int, str]:
    """LOAD DATA LOCAL INFILE (batched INSERTs when the server forbids it): (rows, method)."""
    cur = raw.cursor()
    try:
        cur.execute(load_data_sql(table.name, table.column_names), (str(path),))
    except Exception as exc:  # noqa: BLE001 - PyMySQL OperationalError/InternalError
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        if code not in _LOCAL_INFILE_OFF:
            raise
        raw.rollback()
        return insert_batches(raw, table, path, ["%s"] * len(table.columns)), "batched INSERT (local_infile=OFF)"
    rows = int(cur.rowcount)
    warnings = getattr(cur, "warning_count", 0)
    if warnings:
        cur.execute("SHOW WARNINGS LIMIT 3")
        shown = cur.fetchall()
        raw.rollback()
        raise RunFailed(f"loading {path.name} into {table.name} gave warnings: {shown}",
                        "the .tbl file does not match the table; regenerate the data")
    raw.commit()
    return rows, "LOAD DATA LOCAL INFILE"


def bulk_load(kind: Kind, raw: Any, table: TableSpec, path: Path) -> tuple[int, str]:
    """Load one data file by the target's fastest path: (rows, method)."""
    if kind.module == "pymysql":
        return load_mysql(raw, table, path)
    if kind.module == "psycopg":
        rows = copy_file(raw, table.name, table.column_names, path)
        raw.commit()
        return rows, "COPY FROM STDIN"
    count = len(table.columns)
    markers = [f":{i}" for i in range(1, count + 1)] if kind.dialect == "oracle" else ["%s"] * count
    return insert_batches(raw, table, path, markers), f"executemany batches of {BATCH}"


# after the load ---------------------------------------------------------------------------------------------

def analyze(kind: Kind, raw: Any, tables: list[str]) -> None:
    """Refresh optimizer statistics of the benchmark tables."""
    cur = raw.cursor()
    if kind.module == "pymysql":
        cur.execute("ANALYZE TABLE " + ", ".join(f"`{t}`" for t in tables))
        cur.fetchall()
    elif kind.module == "psycopg":
        raw.commit()
        raw.autocommit = True
        try:
            cur.execute("VACUUM (ANALYZE) " + ", ".join(tables))
        finally:
            raw.autocommit = False
    elif kind.dialect == "tsql":
        for table in tables:
            cur.execute(f"UPDATE STATISTICS {table} WITH FULLSCAN")
    else:
        cur.execute("BEGIN DBMS_STATS.GATHER_SCHEMA_STATS(USER); END;")
    raw.commit()


_SIZE_SQL = {
    "mysql": "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.TABLES "
             "WHERE table_schema = DATABASE()",
    "postgres": "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'",
    "tsql": "SELECT COALESCE(SUM(reserved_page_count), 0) * 8192 FROM sys.dm_db_partition_stats",
    "oracle": "SELECT COALESCE(SUM(bytes), 0) FROM user_segments",
}


def family(kind: Kind) -> str:
    """Which catalog answers size questions: ``mysql`` (MySQL and MariaDB), ``postgres``, ``tsql``, ``oracle``."""
    return "mysql" if kind.module == "pymysql" else kind.dialect


def _fresh_statistics(cur: Any, raw: Any, dialect: str) -> None:
    if dialect == "mysql":
        try:  # MySQL 8 caches these statistics for a day by default
            cur.execute("SET SESSION information_schema_stats_expiry = 0")
        except Exception:  # noqa: BLE001 - MariaDB has no such variable and no such cache
            raw.rollback()


def storage_bytes(kind: Kind, raw: Any) -> int:
    """Bytes the benchmark database's tables and indexes occupy, as the server's catalog says."""
    cur = raw.cursor()
    dialect = family(kind)
    _fresh_statistics(cur, raw, dialect)
    cur.execute(_SIZE_SQL[dialect])
    value = cur.fetchone()[0]
    raw.commit()
    return int(value or 0)


SIZE_METHODS = {
    "mysql": "information_schema.TABLES data_length / index_length / table_rows (after ANALYZE TABLE)",
    "postgres": "pg_table_size / pg_indexes_size (together pg_total_relation_size), reltuples",
    "tsql": "sys.allocation_units total_pages x 8 KiB per heap/clustered (data) and other indexes, sys.partitions rows",
    "oracle": "USER_SEGMENTS bytes of each table and of its indexes (USER_INDEXES), USER_TABLES.NUM_ROWS",
}


def _names(tables: list[str], upper: bool = False) -> str:
    return ", ".join(f"'{t.upper() if upper else t}'" for t in tables) or "''"


def _table_size_sql(dialect: str, tables: list[str]) -> str:
    """(name, rows, table bytes, index bytes) per benchmark table, from the dialect's own catalog."""
    if dialect == "mysql":
        return ("SELECT table_name, table_rows, data_length, index_length FROM information_schema.TABLES "
                f"WHERE table_schema = DATABASE() AND table_name IN ({_names(tables)})")
    if dialect == "postgres":
        return ("SELECT c.relname, c.reltuples, pg_table_size(c.oid), pg_indexes_size(c.oid) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
                f"AND c.relkind = 'r' AND c.relname IN ({_names(tables)})")
    if dialect == "tsql":
        return ("SELECT t.name, (SELECT SUM(p2.rows) FROM sys.partitions p2 WHERE p2.object_id = t.object_id "
                "AND p2.index_id IN (0, 1)), "
                "SUM(CASE WHEN p.index_id IN (0, 1) THEN a.total_pages ELSE 0 END) * 8192, "
                "SUM(CASE WHEN p.index_id > 1 THEN a.total_pages ELSE 0 END) * 8192 "
                "FROM sys.tables t JOIN sys.partitions p ON p.object_id = t.object_id "
                "JOIN sys.allocation_units a ON a.container_id = p.partition_id "
                f"WHERE t.schema_id = SCHEMA_ID() AND t.name IN ({_names(tables)}) GROUP BY t.name, t.object_id")
    return ("SELECT LOWER(t.table_name), t.num_rows, "
            "(SELECT NVL(SUM(s.bytes), 0) FROM user_segments s WHERE s.segment_name = t.table_name), "
            "(SELECT NVL(SUM(s.bytes), 0) FROM user_segments s JOIN user_indexes i ON i.index_name = s.segment_name "
            "WHERE i.table_name = t.table_name) "
            f"FROM user_tables t WHERE t.table_name IN ({_names(tables, upper=True)})")


def table_sizes(kind: Kind, raw: Any, tables: list[str]) -> dict[str, dict[str, int]]:
    """Per benchmark table: rows (the catalog's estimate), table, index and total bytes, as the server reports."""
    cur = raw.cursor()
    dialect = family(kind)
    _fresh_statistics(cur, raw, dialect)
    cur.execute(_table_size_sql(dialect, tables))
    out = {}
    for name, rows, table, index in cur.fetchall():
        table_bytes, index_bytes = int(table or 0), int(index or 0)
        out[str(name).lower()] = {"rows": max(int(rows or 0), 0), "table_bytes": table_bytes,
                                  "index_bytes": index_bytes, "total_bytes": table_bytes + index_bytes}
    raw.commit()
    return out


def cancel(kind: Kind, raw: Any, reconnect: Callable[[], Any]) -> None:
    """Cancel the statement running on ``raw`` (called from another thread)."""
    if kind.module == "pymysql":
        other = reconnect()
        try:
            other.cursor().execute(f"KILL QUERY {int(raw.thread_id())}")
        finally:
            other.close()
        return
    target = raw if hasattr(raw, "cancel") else getattr(raw, "_conn", None)
    if target is not None and hasattr(target, "cancel"):
        target.cancel()


_FACTS = {  # name -> query returning one value; each is tried on its own (versions differ)
    "mysql": {"server_version": "SELECT VERSION()", "version_comment": "SELECT @@version_comment",
              "collation": "SELECT @@collation_database",
              "buffer_cache": "SELECT @@innodb_buffer_pool_size",
              "isolation": "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES "
                           "WHERE VARIABLE_NAME IN ('TRANSACTION_ISOLATION', 'TX_ISOLATION') LIMIT 1"},
    "postgres": {"server_version": "SELECT version()", "collation": "SELECT current_setting('lc_collate')",
                 "buffer_cache": "SELECT current_setting('shared_buffers')",
                 "isolation": "SELECT current_setting('default_transaction_isolation')"},
    "tsql": {"server_version": "SELECT @@VERSION",
             "collation": "SELECT CAST(DATABASEPROPERTYEX(DB_NAME(), 'Collation') AS NVARCHAR(128))"},
    "oracle": {"server_version": "SELECT banner FROM v$version WHERE ROWNUM = 1",
               "collation": "SELECT value FROM nls_session_parameters WHERE parameter = 'NLS_SORT'"},
}


def session_facts(kind: Kind, raw: Any) -> dict[str, Any]:
    """Server facts worth recording: version and settings that change answers or plans."""
    dialect = "mysql" if kind.module == "pymysql" else kind.dialect
    facts: dict[str, Any] = {}
    cur = raw.cursor()
    for name, sql in _FACTS[dialect].items():
        try:
            cur.execute(sql)
            row = cur.fetchone()
            facts[name] = " ".join(str(row[0]).split())[:200] if row and row[0] is not None else None
        except Exception as exc:  # noqa: BLE001 - e.g. no access to v$version
            raw.rollback()
            facts[name] = f"not readable: {redact(str(exc)).splitlines()[0][:120]}"
    raw.commit()
    return facts


__all__ = ["SIZE_METHODS", "analyze", "bulk_load", "cancel", "driver_module", "family", "insert_batches", "session_facts",
           "storage_bytes", "table_sizes", "typed_rows"]
