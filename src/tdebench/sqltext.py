"""SQL text rewritten between dialects with sqlglot (shared by engines that translate and by workloads that
write per-dialect scripts)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from tdebench import sqlite_sql


@dataclass(frozen=True)
class SqlDialect:
    """A server's SQL dialect as tdebench writes SQL for it (manual-mode scripts, translated targets)."""

    #: tdebench's name for it
    name: str
    #: sqlglot's name for it
    sqlglot: str
    #: the engine name runs imported from its logs are recorded under (manual mode)
    engine: str
    #: the family of tdebench's own SQL texts (:data:`tdebench.api.dialect.FAMILIES`) it runs as they are,
    #: "" when canonical SQL is transpiled for it
    family: str = ""
    #: the family whose DDL it runs (MySQL runs MariaDB's InnoDB DDL), "" when canonical DDL is transpiled
    schema_family: str = ""
    #: how its date literals are written (``{}``: ``YYYY-MM-DD``)
    date_literal: str = "DATE '{}'"
    #: the URL scheme of ``tdebench run --target`` for it, "" when none
    url_scheme: str = ""
    #: dates are ISO texts read by date functions (SQLite): standard date expressions are rewritten for them
    dates_as_text: bool = False


#: every dialect tdebench writes SQL for, in the order help texts list them
SQL_DIALECTS: tuple[SqlDialect, ...] = (
    SqlDialect("tsql", "tsql", "sqlserver", date_literal="CAST('{}' AS DATE)", url_scheme="mssql"),
    SqlDialect("oracle", "oracle", "oracle", url_scheme="oracle"),
    SqlDialect("mysql", "mysql", "mysql", schema_family="mariadb", url_scheme="mysql"),
    SqlDialect("mariadb", "mysql", "mariadb", family="mariadb", schema_family="mariadb", url_scheme="mariadb"),
    SqlDialect("postgres", "postgres", "postgres", family="postgres", schema_family="postgres",
               url_scheme="postgresql"),
    SqlDialect("sqlite", "sqlite", "sqlite", family="sqlite", schema_family="sqlite", dates_as_text=True),
)
_BY_NAME = {d.name: d for d in SQL_DIALECTS}
#: tdebench's dialect names -> sqlglot's
SQLGLOT_OF = {d.name: d.sqlglot for d in SQL_DIALECTS}


def sql_dialect(name: str) -> SqlDialect:
    """The dialect called ``name``; ValueError naming the known ones otherwise."""
    if name not in _BY_NAME:
        raise ValueError(f"unknown SQL dialect {name!r}; known: {', '.join(_BY_NAME)}")
    return _BY_NAME[name]


def keep_null_ordering(tree: exp.Expression, target: str) -> exp.Expression:
    """Mark every ORDER BY key with the target's own NULL ordering, so sqlglot adds no ``CASE WHEN x IS NULL``
    sort keys that would change the plans being measured (callers make sure no sort key is NULL)."""
    order = Dialect.get_or_raise(target).NULL_ORDERING
    for node in tree.find_all(exp.Ordered):
        desc = bool(node.args.get("desc"))
        first = (not desc) if order == "nulls_are_small" else (desc if order == "nulls_are_large" else False)
        node.set("nulls_first", first)
    return tree


def transpile(sql: str, dialect: str, *, read: str = "postgres", pretty: bool = True,
              date_columns: Collection[str] = ()) -> str:
    """One statement in ``read`` SQL rewritten for ``dialect`` (a key of :data:`SQLGLOT_OF`). For SQLite,
    date expressions are rewritten into its date functions (``date_columns``: the DATE columns, lower case);
    ValueError (sqlglot's UnsupportedError among them) for what the target has no equivalent of."""
    target = SQLGLOT_OF[dialect]
    tree = sqlglot.parse_one(sql, read=SQLGLOT_OF.get(read, read))
    if _BY_NAME[dialect].dates_as_text:
        tree = sqlite_sql.rewrite(tree, date_columns)
    return keep_null_ordering(tree, target).sql(dialect=target, pretty=pretty,
                                                  unsupported_level=sqlglot.ErrorLevel.RAISE)
