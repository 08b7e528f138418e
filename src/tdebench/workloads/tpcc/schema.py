"""The nine TPC-C tables, their DDL per dialect and the indexes created after the load.

Column order is the order of the generated ``.tbl`` files; column types come from the dialect
(:class:`~tdebench.api.dialect.ColumnTypes`). Primary keys are declared in CREATE TABLE (InnoDB clusters rows by
it, SQLite tables get its ``clustered_table_option`` WITHOUT ROWID, PostgreSQL's column encryption keeps key
columns plaintext). Secondary indexes come after the load (MariaDB, SQLite); where the dialect says
``inline_unique_keys`` (PostgreSQL) the unique ones are UNIQUE constraints in CREATE TABLE so that pgcrypto column encryption leaves the looked-up
columns (C_LAST, C_FIRST, O_C_ID) plaintext and indexed -- for every PostgreSQL twin alike -- and the
non-unique history index is left out (see HISTORY_INDEX).

No column is NULL: an undelivered order has O_CARRIER_ID 0 and its lines OL_DELIVERY_D
``1900-01-01 00:00:00`` (PostgreSQL column encryption stores every column NOT NULL).
"""

from __future__ import annotations

from dataclasses import dataclass

from tdebench.api.dialect import Dialect, as_dialect
from tdebench.api.tables import ColumnSpec, TableSpec

UNDELIVERED_CARRIER = 0
UNDELIVERED_DATE = "1900-01-01 00:00:00"


@dataclass(frozen=True)
class Table:
    """One table: columns as (name, kind) and the primary key."""

    name: str
    columns: tuple[tuple[str, str], ...]
    primary_key: tuple[str, ...]

    @property
    def column_names(self) -> list[str]:
        return [c for c, _ in self.columns]

    @property
    def spec(self) -> TableSpec:
        """The table as the engines load it (portable column types)."""
        return TableSpec(self.name, tuple(ColumnSpec(c, portable_type(k)) for c, k in self.columns), self.primary_key)


_PORTABLE = {"int": "int", "ts": "timestamp", "money": "decimal(12,2)", "rate": "decimal(4,4)",
             "amount": "decimal(6,2)", "price": "decimal(5,2)"}


def portable_type(kind: str) -> str:
    """A column kind (``int``, ``v20``, ``c2``, ``money``, ...) as a :class:`ColumnSpec` type."""
    if kind.startswith(("v", "c")) and kind[1:].isdigit():
        return f"{'varchar' if kind[0] == 'v' else 'char'}({kind[1:]})"
    return _PORTABLE[kind]


def _cols(spec: str) -> tuple[tuple[str, str], ...]:
    return tuple((p.split()[0], p.split()[1]) for p in (x.strip() for x in spec.split(",")) if p)


_ADDRESS = "{p}_street_1 v20, {p}_street_2 v20, {p}_city v20, {p}_state c2, {p}_zip c9"
_DIST = ", ".join(f"s_dist_{i:02d} c24" for i in range(1, 11))

TABLES: tuple[Table, ...] = (
    Table("warehouse", _cols("w_id int, w_name v10, " + _ADDRESS.format(p="w") + ", w_tax rate, w_ytd money"),
          ("w_id",)),
    Table("district", _cols("d_w_id int, d_id int, d_name v10, " + _ADDRESS.format(p="d")
                            + ", d_tax rate, d_ytd money, d_next_o_id int"), ("d_w_id", "d_id")),
    Table("customer", _cols("c_w_id int, c_d_id int, c_id int, c_first v16, c_middle c2, c_last v16, "
                            + _ADDRESS.format(p="c") + ", c_phone c16, c_since ts, c_credit c2, "
                            "c_credit_lim money, c_discount rate, c_balance money, c_ytd_payment money, "
                            "c_payment_cnt int, c_delivery_cnt int, c_data v500"), ("c_w_id", "c_d_id", "c_id")),
    Table("history", _cols("h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date ts, "
                           "h_amount amount, h_data v24"), ()),
    Table("orders", _cols("o_w_id int, o_d_id int, o_id int, o_c_id int, o_entry_d ts, o_carrier_id int, "
                          "o_ol_cnt int, o_all_local int"), ("o_w_id", "o_d_id", "o_id")),
    Table("new_order", _cols("no_w_id int, no_d_id int, no_o_id int"), ("no_w_id", "no_d_id", "no_o_id")),
    Table("order_line", _cols("ol_w_id int, ol_d_id int, ol_o_id int, ol_number int, ol_i_id int, "
                              "ol_supply_w_id int, ol_delivery_d ts, ol_quantity int, ol_amount amount, "
                              "ol_dist_info c24"), ("ol_w_id", "ol_d_id", "ol_o_id", "ol_number")),
    Table("item", _cols("i_id int, i_im_id int, i_name v24, i_price price, i_data v50"), ("i_id",)),
    Table("stock", _cols("s_w_id int, s_i_id int, s_quantity int, " + _DIST
                         + ", s_ytd int, s_order_cnt int, s_remote_cnt int, s_data v50"), ("s_w_id", "s_i_id")),
)
TABLE_NAMES = tuple(t.name for t in TABLES)
TABLE_SPECS = tuple(t.spec for t in TABLES)
# secondary indexes (HammerDB's customer_i2 and orders_i2)
INDEXES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("customer_name", "customer", ("c_w_id", "c_d_id", "c_last", "c_first", "c_id")),
    ("orders_customer", "orders", ("o_w_id", "o_d_id", "o_c_id", "o_id")),
)
# HISTORY by customer, covering H_AMOUNT: consistency condition 10 sums it per customer from the index alone
# (not unique: a customer pays many times). Not on PostgreSQL: pgcrypto column encryption leaves no HISTORY
# column plaintext (it has no key), so only the plain twin could have it and Payment would cost the twins
# differently; PostgreSQL sums HISTORY with a hash aggregate and was no faster with it (docs/workloads/tpcc.md).
HISTORY_INDEX = ("history_customer", "history", ("h_c_w_id", "h_c_d_id", "h_c_id", "h_amount"))


def table(name: str) -> Table:
    """The table called ``name``."""
    for t in TABLES:
        if t.name == name:
            return t
    raise ValueError(f"no TPC-C table {name}")


def create_table_sql(dialect: Dialect | str) -> list[str]:
    """CREATE TABLE for every table (primary keys inline; with ``inline_unique_keys`` its unique indexes too)."""
    d = as_dialect(dialect)
    out = []
    for t in TABLES:
        parts = [f"  {d.column_sql(c)}" for c in t.spec.columns]
        if t.primary_key:
            parts.append(f"  PRIMARY KEY ({', '.join(t.primary_key)})")
        if d.inline_unique_keys:
            parts += [f"  CONSTRAINT {name} UNIQUE ({', '.join(cols)})"
                      for name, tab, cols in INDEXES if tab == t.name]
        out.append(f"CREATE TABLE {t.name} (\n" + ",\n".join(parts) + "\n)"
                   + d.create_table_options(clustered=bool(t.primary_key)))
    return out


def index_sql(dialect: Dialect | str) -> list[str]:
    """Secondary indexes created after the load (none with ``inline_unique_keys``: see HISTORY_INDEX and the
    module doc)."""
    if as_dialect(dialect).inline_unique_keys:
        return []
    unique = [f"CREATE UNIQUE INDEX {name} ON {tab} ({', '.join(cols)})" for name, tab, cols in INDEXES]
    name, tab, cols = HISTORY_INDEX
    return [*unique, f"CREATE INDEX {name} ON {tab} ({', '.join(cols)})"]


def drop_sql() -> list[str]:
    """DROP TABLE for every table (tests, reloads)."""
    return [f"DROP TABLE IF EXISTS {t.name}" for t in reversed(TABLES)]
