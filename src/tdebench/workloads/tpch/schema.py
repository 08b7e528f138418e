"""The TPC-H schema as data, and its DDL for each SQL dialect.

Tables are created without keys so they load fast; keys, foreign keys and secondary indexes come after the
load from :func:`constraint_and_index_sql`.

Column types are portable (``int``, ``bigint`` for order keys, which pass 2**31 above SF 300, ``decimal(15,2)``,
``char(n)``, ``varchar(n)``, ``date``); each dialect writes them its own way (:class:`~tdebench.api.dialect.
ColumnTypes`: e.g. SQLite's are INTEGER, REAL and TEXT holding ``YYYY-MM-DD``).

SQLite decimals are REAL: every stored value is the double nearest to its two-decimal text, exactly like a
literal in a query, so the Q6 trap (``0.06 + 0.01 <> 0.07``) is avoided by computing such bounds in Python
(see ``params.py``); sums and averages differ from exact arithmetic by far less than the answer tolerances.

Keys follow the dialect's declared DDL capabilities. SQLite (``alter_adds_keys`` False) cannot add a primary key or a foreign key to an existing table. Its primary keys become UNIQUE indexes
and its foreign keys are **not declared**: the foreign-key column sets get plain indexes, so the access paths
match the other dialects. SQLite never uses declared foreign keys for planning and does not enforce them unless
``PRAGMA foreign_keys=ON``, so nothing measured is lost; the alternative (rebuilding every table with its
constraints after the load) would double the load and change the storage layout.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tdebench.api.dialect import FAMILIES, Dialect, as_dialect
from tdebench.api.tables import ColumnSpec, TableSpec

DIALECTS = FAMILIES


@dataclass(frozen=True)
class ForeignKey:
    table: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.table}_{self.ref_table}_fk"


@dataclass(frozen=True)
class Index:
    table: str
    columns: tuple[str, ...]
    kind: str  # "fk" (a foreign-key column set) or "date" (a single DATE column)

    @property
    def name(self) -> str:
        return f"{self.table}_{'_'.join(self.columns)}_idx"


def _table(name: str, pk: tuple[str, ...], *columns: tuple[str, str]) -> TableSpec:
    return TableSpec(name, tuple(ColumnSpec(n, t) for n, t in columns), pk)


_MONEY = "decimal(15,2)"

# Ordered for loading: every table after the tables it references.
TABLES: tuple[TableSpec, ...] = (
    _table("region", ("r_regionkey",),
           ("r_regionkey", "int"), ("r_name", "char(25)"), ("r_comment", "varchar(152)")),
    _table("nation", ("n_nationkey",),
           ("n_nationkey", "int"), ("n_name", "char(25)"), ("n_regionkey", "int"), ("n_comment", "varchar(152)")),
    _table("part", ("p_partkey",),
           ("p_partkey", "int"), ("p_name", "varchar(55)"), ("p_mfgr", "char(25)"), ("p_brand", "char(10)"),
           ("p_type", "varchar(25)"), ("p_size", "int"), ("p_container", "char(10)"),
           ("p_retailprice", _MONEY), ("p_comment", "varchar(23)")),
    _table("supplier", ("s_suppkey",),
           ("s_suppkey", "int"), ("s_name", "char(25)"), ("s_address", "varchar(40)"), ("s_nationkey", "int"),
           ("s_phone", "char(15)"), ("s_acctbal", _MONEY), ("s_comment", "varchar(101)")),
    _table("partsupp", ("ps_partkey", "ps_suppkey"),
           ("ps_partkey", "int"), ("ps_suppkey", "int"), ("ps_availqty", "int"), ("ps_supplycost", _MONEY),
           ("ps_comment", "varchar(199)")),
    _table("customer", ("c_custkey",),
           ("c_custkey", "int"), ("c_name", "varchar(25)"), ("c_address", "varchar(40)"), ("c_nationkey", "int"),
           ("c_phone", "char(15)"), ("c_acctbal", _MONEY), ("c_mktsegment", "char(10)"),
           ("c_comment", "varchar(117)")),
    _table("orders", ("o_orderkey",),
           ("o_orderkey", "bigint"), ("o_custkey", "int"), ("o_orderstatus", "char(1)"), ("o_totalprice", _MONEY),
           ("o_orderdate", "date"), ("o_orderpriority", "char(15)"), ("o_clerk", "char(15)"),
           ("o_shippriority", "int"), ("o_comment", "varchar(79)")),
    _table("lineitem", ("l_orderkey", "l_linenumber"),
           ("l_orderkey", "bigint"), ("l_partkey", "int"), ("l_suppkey", "int"), ("l_linenumber", "int"),
           ("l_quantity", _MONEY), ("l_extendedprice", _MONEY), ("l_discount", _MONEY), ("l_tax", _MONEY),
           ("l_returnflag", "char(1)"), ("l_linestatus", "char(1)"), ("l_shipdate", "date"),
           ("l_commitdate", "date"), ("l_receiptdate", "date"), ("l_shipinstruct", "char(25)"),
           ("l_shipmode", "char(10)"), ("l_comment", "varchar(44)")),
)

# The spec's foreign keys, with lineitem's l_partkey -> part and l_suppkey -> supplier expressed through the
# composite key into partsupp (which implies both).
FOREIGN_KEYS: tuple[ForeignKey, ...] = (
    ForeignKey("nation", ("n_regionkey",), "region", ("r_regionkey",)),
    ForeignKey("supplier", ("s_nationkey",), "nation", ("n_nationkey",)),
    ForeignKey("customer", ("c_nationkey",), "nation", ("n_nationkey",)),
    ForeignKey("partsupp", ("ps_partkey",), "part", ("p_partkey",)),
    ForeignKey("partsupp", ("ps_suppkey",), "supplier", ("s_suppkey",)),
    ForeignKey("orders", ("o_custkey",), "customer", ("c_custkey",)),
    ForeignKey("lineitem", ("l_orderkey",), "orders", ("o_orderkey",)),
    ForeignKey("lineitem", ("l_partkey", "l_suppkey"), "partsupp", ("ps_partkey", "ps_suppkey")),
)

# Indexes the spec allows beyond the primary keys: foreign-key column sets that are not a primary-key prefix
# (partsupp(ps_partkey) and lineitem(l_orderkey) are), and single DATE columns.
FK_INDEXES: tuple[Index, ...] = (
    Index("nation", ("n_regionkey",), "fk"),
    Index("supplier", ("s_nationkey",), "fk"),
    Index("customer", ("c_nationkey",), "fk"),
    Index("partsupp", ("ps_suppkey",), "fk"),
    Index("orders", ("o_custkey",), "fk"),
    Index("lineitem", ("l_partkey", "l_suppkey"), "fk"),
)
DATE_INDEXES: tuple[Index, ...] = (
    Index("orders", ("o_orderdate",), "date"),
    Index("lineitem", ("l_shipdate",), "date"),
)

# every table knows its foreign-key columns (column encryption keeps them plaintext, so joins work)
TABLES = tuple(replace(t, foreign_key_columns=tuple(c for f in FOREIGN_KEYS if f.table == t.name for c in f.columns))
               for t in TABLES)
_BY_NAME = {t.name: t for t in TABLES}


def table(name: str) -> TableSpec:
    """The table called ``name`` (ValueError if there is none)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown TPC-H table {name!r}; known: {', '.join(_BY_NAME)}") from None


def column_names(name: str) -> list[str]:
    """Column names of table ``name`` in load (``.tbl`` field) order."""
    return [c.name for c in table(name).columns]


def create_table_sql(dialect: Dialect | str, *, suffix: str = "") -> list[str]:
    """CREATE TABLE statements (no keys, no indexes) in load order.

    ``suffix`` is appended after the closing parenthesis, e.g. ``ENCRYPTED=YES`` for MariaDB or
    ``USING tde_heap`` for PostgreSQL, after the dialect's own table options.
    """
    d = as_dialect(dialect)
    statements = []
    for t in TABLES:
        cols = ",\n".join(f"  {d.column_sql(c)}" for c in t.columns)
        statements.append(f"CREATE TABLE {t.name} (\n{cols}\n)" + d.create_table_options(suffix))
    return statements


def _cols(columns: tuple[str, ...]) -> str:
    return ", ".join(columns)


def constraint_and_index_sql(dialect: Dialect | str, *, date_indexes: bool = False) -> list[str]:
    """Primary keys, secondary indexes and foreign keys, to run after the load, in that order.

    Secondary indexes are the foreign-key column sets; ``date_indexes`` adds the single-DATE-column indexes
    (o_orderdate, l_shipdate), which the spec allows but which can lead planners into slow plans, so they are
    off by default. Where every ALTER TABLE rebuilds its table (MariaDB) keys and indexes come in one ALTER TABLE
    per table (one rebuild each), then one per table for its foreign keys. Where ALTER TABLE cannot add keys
    (SQLite) primary keys become unique indexes and foreign keys are left out (see the module docstring).
    """
    d = as_dialect(dialect)
    indexes = FK_INDEXES + (DATE_INDEXES if date_indexes else ())
    if not d.alter_adds_keys:
        return [f"CREATE UNIQUE INDEX {t.name}_pk ON {t.name} ({_cols(t.primary_key)})" for t in TABLES] + [
            f"CREATE INDEX {i.name} ON {i.table} ({_cols(i.columns)})" for i in indexes]
    if not d.alter_rebuilds:
        return (
            [f"ALTER TABLE {t.name} ADD CONSTRAINT {t.name}_pk PRIMARY KEY ({_cols(t.primary_key)})"
             for t in TABLES]
            + [f"CREATE INDEX {i.name} ON {i.table} ({_cols(i.columns)})" for i in indexes]
            + [f"ALTER TABLE {f.table} ADD CONSTRAINT {f.name} FOREIGN KEY ({_cols(f.columns)}) "
               f"REFERENCES {f.ref_table} ({_cols(f.ref_columns)})" for f in FOREIGN_KEYS]
        )
    statements = []
    for t in TABLES:
        clauses = [f"ADD PRIMARY KEY ({_cols(t.primary_key)})"]
        clauses += [f"ADD INDEX {i.name} ({_cols(i.columns)})" for i in indexes if i.table == t.name]
        statements.append(f"ALTER TABLE {t.name} " + ", ".join(clauses))
    for t in TABLES:
        fks = [f for f in FOREIGN_KEYS if f.table == t.name]
        if fks:
            statements.append(f"ALTER TABLE {t.name} " + ", ".join(
                f"ADD CONSTRAINT {f.name} FOREIGN KEY ({_cols(f.columns)}) "
                f"REFERENCES {f.ref_table} ({_cols(f.ref_columns)})" for f in fks))
    return statements