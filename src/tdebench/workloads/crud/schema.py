"""The Persons tables and the CRUD statements per SQL dialect.

Three tables of identical shape:

* ``persons`` -- the table the operations work on (ids 1 … rows);
* ``persons_stage`` -- the rows INSERT copies in (ids rows+1 … rows+max batch), like the study's
  ``randominput1m``;
* ``persons_undo`` -- a copy of ids 1 … max batch, used only to put deleted rows back between batches.

Bytes processed are the rows' value sizes as the DBMS reports them: ``OCTET_LENGTH`` (``LENGTH(CAST(… AS
BLOB))`` in SQLite) of every text column plus the fixed width of the integer columns (BIGINT id and credit
card: 8 bytes each, INT age: 4 bytes), summed over the rows of the batch.
"""

from __future__ import annotations

from tdebench.api.dialect import Dialect, as_dialect
from tdebench.api.tables import ColumnSpec, TableSpec

TABLES = ("persons", "persons_stage", "persons_undo")
COLUMNS = ("id", "first_name", "last_name", "age", "credit_card", "address", "city_of_birth", "gender")
TEXT_COLUMNS = ("first_name", "last_name", "address", "city_of_birth", "gender")
FIXED_BYTES_PER_ROW = 8 + 4 + 8  # id BIGINT, age INT, credit_card BIGINT

_PORTABLE = (("id", "bigint"), ("first_name", "varchar(64)"), ("last_name", "varchar(64)"), ("age", "int"),
             ("credit_card", "bigint"), ("address", "varchar(128)"), ("city_of_birth", "varchar(64)"),
             ("gender", "varchar(8)"))


def table_spec(table: str) -> TableSpec:
    """One of the three tables as the engines load it."""
    return TableSpec(table, tuple(ColumnSpec(n, t) for n, t in _PORTABLE), ("id",))


TABLE_SPECS: tuple[TableSpec, ...] = tuple(table_spec(t) for t in TABLES)


def create_table_sql(dialect: Dialect | str, table: str) -> str:
    """CREATE TABLE with the primary key on id (SQLite: a rowid alias; MariaDB: the clustered index), text
    stored as UTF-8."""
    d = as_dialect(dialect)
    cols = ",\n".join(f"  {d.column_sql(c)}" for c in table_spec(table).columns)
    return f"CREATE TABLE {table} (\n{cols},\n  PRIMARY KEY (id)\n)" + d.create_table_options(d.utf8_table_option)


def create_all_sql(dialect: Dialect | str) -> list[str]:
    return [create_table_sql(dialect, t) for t in TABLES]


def _cols() -> str:
    return ", ".join(COLUMNS)


def select_sql(first: int, last: int) -> str:
    """The k rows of a batch, every column (fetched in full by the caller)."""
    return f"SELECT {_cols()} FROM persons WHERE id BETWEEN {int(first)} AND {int(last)}"


def insert_sql(first: int, last: int) -> str:
    """Copy staged rows in, server side, as the study's INSERT … SELECT from its staging table."""
    return (f"INSERT INTO persons ({_cols()}) SELECT {_cols()} FROM persons_stage "
            f"WHERE id BETWEEN {int(first)} AND {int(last)}")


def delete_sql(first: int, last: int) -> str:
    return f"DELETE FROM persons WHERE id BETWEEN {int(first)} AND {int(last)}"


def count_range_sql(first: int, last: int) -> str:
    """How many rows of ``persons`` a batch's ids hold."""
    return f"SELECT COUNT(*) FROM persons WHERE id BETWEEN {int(first)} AND {int(last)}"


def copy_undo_sql(last: int) -> str:
    """Fill persons_undo with ids 1 … ``last`` right after the load."""
    return f"INSERT INTO persons_undo ({_cols()}) SELECT {_cols()} FROM persons WHERE id <= {int(last)}"


def reset_sql(rows: int, undo_rows: int) -> list[str]:
    """Back to ids 1 … rows, whatever a (possibly failed) batch left: drop inserted ids, restore deleted ones."""
    cols = ", ".join(f"u.{c}" for c in COLUMNS)
    return [f"DELETE FROM persons WHERE id > {int(rows)}",
            f"INSERT INTO persons ({_cols()}) SELECT {cols} FROM persons_undo u "
            f"WHERE u.id <= {int(undo_rows)} AND NOT EXISTS (SELECT 1 FROM persons p WHERE p.id = u.id)"]


def octets(dialect: Dialect | str, column: str) -> str:
    """Bytes of a text value as the DBMS stores it (UTF-8)."""
    return as_dialect(dialect).octet_length.format(column)


def measure_sql(dialect: Dialect | str, table: str, first: int, last: int) -> str:
    """COUNT(*), value bytes and a cheap checksum of the rows with ids first … last."""
    text = " + ".join(octets(dialect, c) for c in TEXT_COLUMNS)
    return (f"SELECT COUNT(*), COALESCE(SUM({text}), 0) + {FIXED_BYTES_PER_ROW} * COUNT(*), "
            f"COALESCE(SUM(age), 0), COALESCE(SUM(credit_card % 1000003), 0) "
            f"FROM {table} WHERE id BETWEEN {int(first)} AND {int(last)}")


def count_sql(table: str) -> str:
    return f"SELECT COUNT(*), COALESCE(MIN(id), 0), COALESCE(MAX(id), 0) FROM {table}"
