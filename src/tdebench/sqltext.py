"""SQL text rewritten between dialects with sqlglot (shared by engines that translate and by workloads that
write per-dialect scripts)."""

from __future__ import annotations

from collections.abc import Collection

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from tdebench import sqlite_sql

#: tdebench's dialect names -> sqlglot's
SQLGLOT_OF = {"tsql": "tsql", "oracle": "oracle", "mysql": "mysql", "mariadb": "mysql", "postgres": "postgres",
              "sqlite": "sqlite"}


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
    if target == "sqlite":
        tree = sqlite_sql.rewrite(tree, date_columns)
    return keep_null_ordering(tree, target).sql(dialect=target, pretty=pretty,
                                                  unsupported_level=sqlglot.ErrorLevel.RAISE)
