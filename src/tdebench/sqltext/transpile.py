"""SQL text rewritten between dialects with sqlglot (shared by engines that translate, by workloads that run a
canonical text on every family and by the scripts of manual mode)."""

from __future__ import annotations

from collections.abc import Collection

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError

from tdebench.sqltext import sqlite
from tdebench.sqltext.dialects import SQLGLOT_OF, sql_dialect

__all__ = ["SqlglotError", "keep_null_ordering", "transpile"]


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
    date expressions are rewritten into its date functions (``date_columns``: the DATE columns, lower case).
    SqlglotError (a ParseError, TokenError or UnsupportedError) or ValueError for what the target has no
    equivalent of."""
    target = SQLGLOT_OF[dialect]
    tree = sqlglot.parse_one(sql, read=SQLGLOT_OF.get(read, read))
    if sql_dialect(dialect).dates_as_text:
        tree = sqlite.rewrite(tree, date_columns)
    return keep_null_ordering(tree, target).sql(dialect=target, pretty=pretty,
                                                  unsupported_level=sqlglot.ErrorLevel.RAISE)
