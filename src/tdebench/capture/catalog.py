"""The source's tables, columns, keys and indexes, read from its catalog, with each column's type mapped to one
the sql workload loads (docs/workloads/sql.md); a type with no such mapping is refused, naming the column."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tdebench.capture.kinds import MYSQL, POSTGRES, SQLITE
from tdebench.capture.source import Source
from tdebench.encryption import redact
from tdebench.errors import EnvironmentProblem, UsageError


@dataclass
class Column:
    name: str
    type: str  # canonical (PostgreSQL) type text, e.g. VARCHAR(40), DECIMAL(10,2), TIMESTAMP(6)
    nullable: bool
    source_type: str


@dataclass
class Table:
    name: str
    columns: list[Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    foreign_keys: list[tuple[list[str], str, list[str]]] = field(default_factory=list)
    indexes: list[tuple[str, bool, list[str]]] = field(default_factory=list)  # name, unique, columns


class Unmappable(UsageError):
    """A column type the sql workload cannot load."""


_INTS = {"int", "integer", "smallint", "mediumint", "tinyint", "int2", "int4", "serial", "smallserial"}
_BIGS = {"bigint", "int8", "bigserial"}
_FLOATS = {"float", "double", "real", "double precision", "float4", "float8"}
_TEXTS = {"text", "tinytext", "mediumtext", "longtext", "clob"}


def map_type(table: str, column: str, data_type: str, length: int | None, precision: int | None,
             scale: int | None, full: str = "") -> str:
    """The canonical type of a catalog column, or Unmappable naming it."""
    kind = data_type.lower().strip()
    if kind == "tinyint" and full.lower().startswith("tinyint(1)") or kind in ("boolean", "bool"):
        return "BOOLEAN"
    if kind in _INTS:
        return "INTEGER" if "unsigned" not in full.lower() or kind != "int" else "BIGINT"
    if kind in _BIGS:
        return "BIGINT"
    if kind in ("decimal", "numeric"):
        if precision is None:
            return "DOUBLE PRECISION"  # PostgreSQL's unbounded numeric: no precision to declare
        return f"DECIMAL({precision},{scale or 0})"
    if kind in _FLOATS:
        return "DOUBLE PRECISION"
    if kind in ("char", "character", "bpchar"):
        return f"CHAR({length or 1})"
    if kind in ("varchar", "character varying", "nvarchar"):
        return f"VARCHAR({length})" if length else "TEXT"
    if kind in _TEXTS:
        return "TEXT"
    if kind == "date":
        return "DATE"
    if kind in ("datetime", "timestamp", "timestamp without time zone", "timestamp with time zone"):
        return f"TIMESTAMP({precision})" if precision else "TIMESTAMP"
    raise Unmappable(f"column {table}.{column} has type {full or data_type}, which the sql workload cannot load",
                     f"leave table {table} out with --tables (the other tables), or change the column's type on a "
                     "copy of the database")


def _sqlite_type(table: str, column: str, declared: str) -> str:
    text = declared.upper()
    size = [int(n) for n in re.findall(r"\d+", text)]
    if re.search(r"BOOL", text):
        return "BOOLEAN"
    if "BIGINT" in text:
        return "BIGINT"
    if "INT" in text:
        return "BIGINT" if not text.strip().startswith(("INT", "SMALLINT", "TINYINT", "MEDIUMINT")) else "INTEGER"
    if re.search(r"DEC|NUMERIC", text):
        return f"DECIMAL({size[0]},{size[1] if len(size) > 1 else 0})" if size else "DOUBLE PRECISION"
    if re.search(r"REAL|FLOA|DOUB", text):
        return "DOUBLE PRECISION"
    if re.search(r"DATETIME|TIMESTAMP", text):
        return "TIMESTAMP"
    if "DATE" in text:
        return "DATE"
    if re.search(r"CHAR|CLOB|TEXT", text):
        return f"VARCHAR({size[0]})" if size and "VAR" in text else (f"CHAR({size[0]})" if size else "TEXT")
    raise Unmappable(f"column {table}.{column} has type {declared or '(none)'}, which the sql workload cannot load",
                     f"leave table {table} out with --tables, or give the column a declared type on a copy")


def _mysql(src: Source, wanted: list[str]) -> dict[str, Table]:
    tables = {name: Table(name) for name in wanted}
    cols = src.all("SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, "
                   "NUMERIC_SCALE, DATETIME_PRECISION, IS_NULLABLE, COLUMN_TYPE FROM information_schema.COLUMNS "
                   "WHERE TABLE_SCHEMA = %s ORDER BY TABLE_NAME, ORDINAL_POSITION", (src.database,))
    for table, column, kind, length, precision, scale, dt_precision, nullable, full in cols:
        if table in tables:
            prec = dt_precision if kind in ("datetime", "timestamp") else precision
            tables[table].columns.append(Column(column, map_type(table, column, kind, length, prec, scale, full),
                                                nullable == "YES", full))
    keys = src.all("SELECT s.TABLE_NAME, s.INDEX_NAME, s.NON_UNIQUE, s.COLUMN_NAME "
                   "FROM information_schema.STATISTICS s "
                   "WHERE s.TABLE_SCHEMA = %s ORDER BY s.TABLE_NAME, s.INDEX_NAME, s.SEQ_IN_INDEX", (src.database,))
    _indexes(tables, [(t, i, not bool(int(n)), c, i == "PRIMARY") for t, i, n, c in keys])
    fks = src.all("SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME "
                  "FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = %s AND REFERENCED_TABLE_NAME IS "
                  "NOT NULL ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION", (src.database,))
    _foreign_keys(tables, fks)
    return tables


def _postgres(src: Source, wanted: list[str]) -> dict[str, Table]:
    tables = {name: Table(name) for name in wanted}
    cols = src.all("SELECT table_name, column_name, data_type, character_maximum_length, numeric_precision, "
                   "numeric_scale, datetime_precision, is_nullable, udt_name FROM information_schema.columns "
                   "WHERE table_schema = 'public' ORDER BY table_name, ordinal_position")
    for table, column, kind, length, precision, scale, dt_precision, nullable, udt in cols:
        if table in tables:
            prec = dt_precision if kind.startswith("timestamp") else precision
            if kind in ("integer", "smallint", "bigint", "real", "double precision"):
                prec = None
            tables[table].columns.append(Column(column, map_type(table, column, kind, length, prec, scale, udt),
                                                nullable == "YES", kind))
    idx = src.all("SELECT t.relname, i.relname, ix.indisunique, ix.indisprimary, a.attname, k.n "
                  "FROM pg_index ix JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_class i ON i.oid = ix.indexrelid "
                  "JOIN pg_namespace ns ON ns.oid = t.relnamespace "
                  "CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, n) "
                  "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum "
                  "WHERE ns.nspname = 'public' ORDER BY t.relname, i.relname, k.n")
    _indexes(tables, [(t, i, u, c, p) for t, i, u, p, c, _ in idx])
    fks = src.all("SELECT tc.table_name, tc.constraint_name, kcu.column_name, ccu.table_name, ccu.column_name "
                  "FROM information_schema.table_constraints tc JOIN information_schema.key_column_usage kcu "
                  "ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema "
                  "JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name "
                  "AND ccu.table_schema = tc.table_schema WHERE tc.constraint_type = 'FOREIGN KEY' AND "
                  "tc.table_schema = 'public' ORDER BY tc.table_name, tc.constraint_name, kcu.ordinal_position")
    _foreign_keys(tables, fks)
    return tables


def _sqlite(src: Source, wanted: list[str]) -> dict[str, Table]:
    tables: dict[str, Table] = {}
    for name in wanted:
        table = tables[name] = Table(name)
        info = src.all(f'PRAGMA table_info("{name}")')
        for _, column, declared, notnull, _, pk in info:
            table.columns.append(Column(column, _sqlite_type(name, column, declared), not notnull and not pk,
                                        declared))
        table.primary_key = [c for _, c, _, _, _, pk in sorted(info, key=lambda r: r[5]) if pk]
        for _, index, unique, origin, _ in src.all(f'PRAGMA index_list("{name}")'):
            if origin == "c":
                cols = [r[2] for r in src.all(f'PRAGMA index_info("{index}")')]
                table.indexes.append((index, bool(unique), cols))
        fks: dict[int, tuple[list[str], str, list[str]]] = {}
        for row in src.all(f'PRAGMA foreign_key_list("{name}")'):
            entry = fks.setdefault(row[0], ([], row[2], []))
            entry[0].append(row[3])
            entry[2].append(row[4])
        table.foreign_keys = list(fks.values())
    return tables


def _indexes(tables: dict[str, Table], rows: list[tuple[str, str, bool, str, bool]]) -> None:
    found: dict[tuple[str, str], tuple[bool, bool, list[str]]] = {}
    for table, index, unique, column, primary in rows:
        if table in tables:
            found.setdefault((table, index), (unique, primary, []))[2].append(column)
    for (table, index), (unique, primary, cols) in found.items():
        if primary:
            tables[table].primary_key = cols
        else:
            tables[table].indexes.append((index, unique, cols))


def _foreign_keys(tables: dict[str, Table], rows: list[tuple[str, str, str, str, str]]) -> None:
    found: dict[tuple[str, str], tuple[list[str], str, list[str]]] = {}
    for table, name, column, ref_table, ref_column in rows:
        if table in tables and ref_table in tables:
            entry = found.setdefault((table, name), ([], ref_table, []))
            entry[0].append(column)
            entry[2].append(ref_column)
    for (table, _), fk in found.items():
        tables[table].foreign_keys.append(fk)
        # MySQL makes an index for every foreign key: it is in the catalog already, no need to add one


def read_catalog(src: Source, only: list[str] | None) -> list[Table]:
    """The tables to capture (``only``: these, in this order); UsageError for an unknown name or a type that
    cannot be mapped."""
    reader = _READERS[src.kind]
    names = _names(src)
    if only:
        unknown = [t for t in only if t not in names]
        if unknown:
            raise UsageError(f"--tables: the source has no table {unknown[0]}",
                             f"choose among: {', '.join(names) or '(none)'}")
    if not names:
        raise UsageError(f"the source ({src.description}) has no tables the capture user can read",
                         "check the database in the URL, and GRANT SELECT on its tables to the capture user")
    wanted = only or names
    tables = reader(src, wanted)
    return [tables[t] for t in wanted]


def _names(src: Source) -> list[str]:
    sql, with_database = _NAMES[src.kind]
    return [r[0] for r in src.all(sql, (src.database,) if with_database else ())]


_READERS = {MYSQL: _mysql, POSTGRES: _postgres, SQLITE: _sqlite}
# (the base tables' names, whether the statement takes the database name)
_NAMES = {
    MYSQL: ("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_TYPE = 'BASE TABLE' "
            "ORDER BY 1", True),
    POSTGRES: ("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = "
               "'BASE TABLE' ORDER BY 1", False),
    SQLITE: ("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1", False),
}
_GRANTS = {MYSQL: "GRANT SELECT ON {database}.* TO '{user}'@'%'",
           POSTGRES: "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {user}"}


def check_readable(src: Source, tables: list[Table]) -> None:
    """Every captured table can be read by the capture user (EnvironmentProblem with the GRANT if not)."""
    for table in tables:
        try:
            src.all(readable_sql(src, table))
        except Exception as exc:  # noqa: BLE001 - the driver's access-denied error
            grant = _GRANTS.get(src.kind, "make the file readable").format(database=src.database, user=src.user)
            raise EnvironmentProblem(f"the capture user ({src.user}) cannot read table {table.name}: "
                                     f"{redact(str(exc)).splitlines()[0]}", f"{grant} (as the DBA)") from None


def readable_sql(src: Source, table: Table) -> str:
    """The statement that shows a table can be read (it returns no row)."""
    return f"SELECT * FROM {src.kind.ident(table.name)} LIMIT 0"
