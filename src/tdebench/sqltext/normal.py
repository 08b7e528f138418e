"""Statements reduced to their normalized form with sqlglot (literals and parameters become placeholders, an IN
list one placeholder): equal for every call of the same statement, whatever its values. Shared by ``tdebench
capture`` (grouping a log or matching statistics digests) and the replay workload (latency per statement form)."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

_SYSTEM = {"information_schema", "performance_schema", "pg_catalog", "mysql", "sys"}


def parse(text: str, dialect: str) -> exp.Expression | None:
    """The one statement of ``text`` in sqlglot's ``dialect``; None when it does not parse or is not one."""
    try:
        trees = sqlglot.parse(text, read=dialect)
    except (SqlglotError, ValueError):
        return None
    return trees[0] if len(trees) == 1 and trees[0] is not None else None


def _placeholder(node: exp.Expression) -> exp.Expression:
    if isinstance(node, (exp.Literal, exp.Placeholder, exp.Parameter, exp.Null)) or \
            isinstance(node, exp.Boolean):
        return exp.Placeholder()
    if isinstance(node, exp.Neg) and isinstance(node.this, (exp.Literal, exp.Placeholder)):
        return exp.Placeholder()
    if isinstance(node, exp.Identifier) and node.args.get("quoted"):
        return exp.Identifier(this=node.this, quoted=False)
    if isinstance(node, exp.In) and node.expressions:
        return exp.In(this=node.this, expressions=[exp.Placeholder()])
    if isinstance(node, exp.Tuple) and node.expressions and \
            all(isinstance(e, exp.Placeholder) for e in node.expressions):
        return exp.Placeholder()
    if isinstance(node, exp.Values):
        return exp.Values(expressions=[exp.Tuple(expressions=[exp.Placeholder()])])
    return node


def normalize(tree: exp.Expression, dialect: str) -> str:
    """The statement's form without its values (equal for every call of the same statement)."""
    out = tree.copy()
    for node in reversed(list(out.walk(bfs=False))):
        new = _placeholder(node)
        if new is not node and node is not out:
            node.replace(new)
    return out.sql(dialect=dialect, normalize=True, identify=False).lower()


def tables_of(tree: exp.Expression) -> set[str]:
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    out = set()
    for table in tree.find_all(exp.Table):
        if table.db and table.db.lower() in _SYSTEM:
            return {"<system>"}
        if table.name and table.name.lower() not in ctes:
            out.add(table.name.lower())
    return out


def statement_kind(tree: exp.Expression) -> str | None:
    if isinstance(tree, (exp.Query, exp.Values)):
        return "query"
    if isinstance(tree, (exp.Insert, exp.Update, exp.Delete)):
        return "write"
    return None
