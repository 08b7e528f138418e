"""Captured statement groups as the sql workload's steps: ``queries/qNN_<table>.sql`` and ``writes/wNN_<table>.sql``
with their undo. A write is kept only when its undo can be derived from the statement itself (an INSERT of
literal rows with their primary key: the undo deletes those keys, and the rows are left out of the captured data
so that the write finds the table as it was before it ran); any other write is listed as left out."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from tdebench.capture.catalog import Table
from tdebench.capture.data import text as value_text
from tdebench.capture.statements import Group
from tdebench.sqltext.normal import parse
from tdebench.sqltext.serverlog import Logged
from tdebench.sqltext.tree import exp


@dataclass
class Step:
    name: str
    kind: str
    sql: str
    weight: int
    group: Group
    undo: str | None = None
    joined: list["Step"] = field(default_factory=list)  # INSERTs that run in this step, after its own (dependent.py)


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)
    left_out: list[dict[str, str]] = field(default_factory=list)
    excluded: dict[str, set[tuple[str, ...]]] = field(default_factory=dict)  # table -> primary keys


def _literal(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Literal):
        return node.this
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return "-" + node.this.this
    return None


def insert_rows(tree: exp.Insert, tables: dict[str, Table]) -> tuple[Table, list[dict[str, exp.Expression]]] | str:
    """(table, each inserted row as column -> value node) of an INSERT of literal rows, or why it is none."""
    target = tree.this
    columns = [c.name for c in target.expressions] if isinstance(target, exp.Schema) else []
    table_node = target.this if isinstance(target, exp.Schema) else target
    table = tables.get(table_node.name.lower()) if isinstance(table_node, exp.Table) else None
    values = tree.expression
    if table is None or not isinstance(values, exp.Values):
        return "an INSERT ... SELECT (no undo can be derived from it)"
    columns = columns or [c.name for c in table.columns]
    return table, [dict(zip(columns, row.expressions)) for row in values.expressions]


def key_of(cells: dict[str, exp.Expression], columns: list[str]) -> tuple[str, ...] | None:
    """The literal values of ``columns`` in one inserted row (as the primary keys are noted), None when one is
    missing or computed."""
    key = tuple(_literal(cells[c]) if c in cells else None for c in columns)
    return None if any(k is None for k in key) else key  # type: ignore[return-value]


def insert_undo(tree: exp.Insert, tables: dict[str, Table]) -> tuple[str, str, set[tuple[str, ...]]] | str:
    """(table, undo statement, keys inserted), or why no undo can be derived."""
    found = insert_rows(tree, tables)
    if isinstance(found, str):
        return found
    table, rows = found
    if not table.primary_key or any(k not in cells for cells in rows[:1] for k in table.primary_key):
        return f"an INSERT that does not give {table.name}'s primary key (no undo can be derived from it)"
    keys: set[tuple[str, ...]] = set()
    for cells in rows:
        key = key_of(cells, table.primary_key)
        if key is None:
            return "an INSERT whose primary key values are computed (no undo can be derived from it)"
        keys.add(key)
    conditions = " OR ".join("(" + " AND ".join(f"{c} = {_sql_literal(v)}" for c, v in zip(table.primary_key, key))
                             + ")" for key in sorted(keys))
    return table.name, f"DELETE FROM {table.name} WHERE {conditions}", keys


def _sql_literal(value: str) -> str:
    try:
        float(value)
        return value
    except ValueError:
        return "'" + value.replace("'", "''") + "'"


def plan_steps(groups: list[Group], tables: list[Table], dialect: str) -> Plan:
    """Steps for the groups (already ranked and cut to --top); ``dialect``: sqlglot's for the statements."""
    plan = Plan()
    by_name = {t.name.lower(): t for t in tables}
    for group in groups:
        label = group.shape
        if group.text is None:
            plan.left_out.append({"statement": label, "reason": "no literal values found for it (neither in the log "
                                  "nor in the server's statement history); give --log with a log of the same window"})
            continue
        undo = None
        if group.kind == "write":
            tree = parse(group.text, dialect)
            derived = insert_undo(tree, by_name) if isinstance(tree, exp.Insert) else \
                "an UPDATE or DELETE (its undo needs the rows as they were; write it by hand, docs/workloads/sql.md)"
            if isinstance(derived, str):
                plan.left_out.append({"statement": label, "reason": f"a write kept out: {derived}"})
                continue
            table, undo, keys = derived
            plan.excluded.setdefault(table, set()).update(keys)
        plan.steps.append(Step("", group.kind, group.text, group.count, group, undo))
    plan.steps = renumber(plan.steps)
    return plan


def renumber(steps: list[Step]) -> list[Step]:
    """The steps named in their order: ``qNN_<table>`` for queries, ``wNN_<table>`` for writes, from 01."""
    numbers = {"query": 0, "write": 0}
    for step in steps:
        numbers[step.kind] += 1
        prefix = "q" if step.kind == "query" else "w"
        step.name = f"{prefix}{numbers[step.kind]:02d}_{sorted(step.group.tables)[0]}"[:63]
    return steps


def excluded_text(plan: Plan, table: Table) -> set[tuple[str, ...]]:
    """The primary keys (as the CSV writes them) of rows a kept INSERT adds to ``table``."""
    return plan.excluded.get(table.name, set())


__all__ = ["Plan", "Step", "excluded_text", "insert_undo", "plan_steps", "renumber", "value_text"]


class InsertedRows:
    """The primary keys of the rows every logged INSERT of literal rows added during the window: left out of the
    data, so that the data is as it was before the window for them (the replay's INSERTs then find no row)."""

    def __init__(self, tables: list[Table], dialect: str) -> None:
        self.tables = {t.name.lower(): t for t in tables}
        self.dialect = dialect
        self.keys: dict[str, set[tuple[str, ...]]] = {}

    def tap(self, statements: Iterable[Logged]) -> Iterator[Logged]:
        for logged in statements:
            if logged.text.lstrip()[:6].lower() == "insert":
                tree = parse(logged.text, self.dialect)
                derived = insert_undo(tree, self.tables) if isinstance(tree, exp.Insert) else None
                if isinstance(derived, tuple):
                    self.keys.setdefault(derived[0], set()).update(derived[2])
            yield logged
