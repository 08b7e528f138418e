"""Hot statements: grouped by normalized form (sqlglot: literals and parameters become placeholders, IN lists one),
each group with one real statement (literal values as the application sent them), its count and time.

From a log every statement is there with its values. From the server's statistics (performance_schema statement
digests, pg_stat_statements) the digests are ranked by total time with their call counts; their values come from
the log given with ``--log`` or the server's own statement history (``events_statements_history_long``); a
digest whose values are found nowhere is listed as left out, never filled with invented values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from tdebench.capture.logs import Logged

DIALECT = {"mysql": "mysql", "postgres": "postgres", "sqlite": "sqlite"}
_SYSTEM = {"information_schema", "performance_schema", "pg_catalog", "mysql", "sys"}


@dataclass
class Group:
    """Statements of one normalized form."""

    key: str
    kind: str  # "query" or "write"
    text: str | None  # one real statement of the group (None: values not found)
    tables: set[str]
    count: int = 0
    seconds: float = 0.0
    digest_text: str = ""
    sessions: set[str] = field(default_factory=set)


def parse(text: str, kind: str) -> exp.Expression | None:
    try:
        trees = sqlglot.parse(text, read=DIALECT[kind])
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


def normalize(tree: exp.Expression, kind: str) -> str:
    """The statement's form without its values (equal for every call of the same statement)."""
    out = tree.copy()
    for node in reversed(list(out.walk(bfs=False))):
        new = _placeholder(node)
        if new is not node and node is not out:
            node.replace(new)
    return out.sql(dialect=DIALECT[kind], normalize=True, identify=False).lower()


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


def group_logged(statements: Iterable[Logged], kind: str, captured: set[str], database: str | None,
                 seen: list[int] | None = None) -> dict[str, Group]:
    """Groups of the logged statements on captured tables (others: session commands, other databases, the
    catalog, are not the application's workload); ``seen[0]`` counts every statement read."""
    groups: dict[str, Group] = {}
    for logged in statements:
        if seen is not None:
            seen[0] += 1
        if database and logged.database and logged.database.lower() != database.lower():
            continue
        tree = parse(logged.text, kind)
        what = statement_kind(tree) if tree is not None else None
        if tree is None or what is None:
            continue
        tables = tables_of(tree)
        if not tables or not tables <= captured:
            continue
        key = normalize(tree, kind)
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(key, what, tree.sql(dialect=DIALECT[kind]), tables)
        group.count += 1
        group.seconds += logged.seconds or 0.0
        group.sessions.add(logged.session)
    return groups


def digest_group(digest_text: str, calls: int, seconds: float, kind: str, captured: set[str],
                 known: dict[str, Group]) -> Group | None:
    """A statistics row as a group: values from ``known`` (the log or the server's history, by normalized form);
    a digest without placeholders is its own statement. None: not a statement on the captured tables."""
    tree = parse(digest_text.replace("...", "?") if kind == "mysql" else digest_text, kind)
    what = statement_kind(tree) if tree is not None else None
    if tree is None or what is None:
        return None
    tables = tables_of(tree)
    if not tables or not tables <= captured:
        return None
    key = normalize(tree, kind)
    found = known.get(key)
    has_values = any(isinstance(n, (exp.Placeholder, exp.Parameter)) for n in tree.walk())
    text = found.text if found is not None else (None if has_values else tree.sql(dialect=DIALECT[kind]))
    return Group(key, what, text, tables, calls, seconds, digest_text)
