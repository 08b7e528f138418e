"""``--redact-literals``: the captured statements without the literal values the application sent. Every value
compared to a column of a captured table is replaced by a value of that column drawn from the captured data
(``data/<table>.csv``), so the statements hold nothing that is not in ``data/`` already, still run, and find rows.

* One row of the captured data is drawn (seeded by the statement's name, so a capture is reproducible) for each
  table a statement names: every value compared to a column of that table becomes that row's value of the
  column, so ``a = ?``, ``<=``, ``>=``, ``BETWEEN``, ``LIKE`` all hold for the drawn row, and conditions on two
  columns of one table (``customer_id = 5 AND status = 'new'``) hold together. An ``IN`` list gets the values of
  as many rows as it has items; a NULL is replaced by the column's next value that is not NULL.
* Numbers compared to no column (``LIMIT 10``, ``quantity * 2``, ``ORDER BY 1``) and strings that are arguments
  of a function or an ``INTERVAL`` (formats, units, separators, ``CASE`` results) are the statement's logic, not
  data: they are kept. Any other string -- one compared to an expression of two columns, or selected as a
  constant -- has no column to draw from: the statement is left out, listed in ``capture.json``.
* A kept INSERT gets the values of one drawn row per inserted row, and a new primary key: the largest captured
  value of its last key column plus 1, 2, ... (an integer column; the other key columns and foreign keys come
  from the drawn row, so they point to rows that exist). An INSERT into a table with a unique index besides its
  primary key, or whose last key column is not an integer, is left out.
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass, field
from pathlib import Path

from tdebench.capture.catalog import Table
from tdebench.capture.data import NULL
from tdebench.capture.steps import Plan, Step, insert_undo, renumber
from tdebench.sqltext.normal import parse
from tdebench.sqltext.tree import exp

SAMPLE_ROWS = 500
_NUMERIC = ("INTEGER", "BIGINT", "DECIMAL", "DOUBLE")
_PASS = (exp.Cast, exp.TryCast, exp.Paren, exp.Neg, exp.Tuple)
_PREDICATES = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike, exp.In, exp.Between,
               exp.NullSafeEQ, exp.NullSafeNEQ)
_STRUCTURE = (exp.Limit, exp.Offset, exp.Fetch, exp.Parameter, exp.Placeholder)


class Unredactable(Exception):
    """A statement whose literals cannot all be replaced by captured values (the reason, for ``left_out``)."""


@dataclass
class Sample:
    """Rows of one captured table (a seeded reservoir sample) and the largest value of each integer column."""

    rows: list[dict[str, str | None]] = field(default_factory=list)
    largest: dict[str, int] = field(default_factory=dict)


def sample_table(path: Path, table: Table, size: int = SAMPLE_ROWS) -> Sample:
    """A reservoir sample of ``data/<table>.csv`` (NULL as None), read once, streaming."""
    rng = random.Random(f"redact-{table.name}")
    integers = [c.name for c in table.columns if c.type in ("INTEGER", "BIGINT")]
    sample = Sample()
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, [])
        for seen, cells in enumerate(reader):
            row = {name: (None if value == NULL else value) for name, value in zip(header, cells)}
            for name in integers:
                value = row.get(name)
                if value is not None:
                    sample.largest[name] = max(sample.largest.get(name, int(value)), int(value))
            if len(sample.rows) < size:
                sample.rows.append(row)
            elif (slot := rng.randrange(seen + 1)) < size:
                sample.rows[slot] = row
    return sample


def _render(value: str | None, column_type: str) -> exp.Expression:
    if value is None:
        return exp.Null()
    if column_type == "BOOLEAN":
        return exp.Boolean(this=value.lower() in ("true", "t", "1"))
    if column_type.startswith(_NUMERIC):
        return exp.Literal.number(value)
    return exp.Literal.string(value)


class Redactor:
    """Replaces the literals of one capture's statements with values drawn from its data."""

    def __init__(self, tables: list[Table], data: Path, dialect: str) -> None:
        self.tables = {t.name.lower(): t for t in tables}
        self.samples = {t.name.lower(): sample_table(data / f"{t.name}.csv", t) for t in tables}
        self.dialect = dialect
        self.next_key: dict[str, int] = {}

    def step(self, step: Step) -> Step:
        """``step`` with its literals drawn from the data (and a new undo for an INSERT), or Unredactable."""
        tree = parse(step.sql, self.dialect)
        if tree is None:
            raise Unredactable("--redact-literals: the statement could not be read again to replace its values")
        rng = random.Random(f"redact-{step.name}")
        if isinstance(tree, exp.Insert):
            self._insert(tree, rng)
            derived = insert_undo(tree, self.tables)
            if isinstance(derived, str):
                raise Unredactable(f"--redact-literals: {derived}")
            return Step(step.name, step.kind, tree.sql(dialect=self.dialect), step.weight, step.group, derived[1])
        self._query(tree, rng)
        return Step(step.name, step.kind, tree.sql(dialect=self.dialect), step.weight, step.group, step.undo)

    # queries -------------------------------------------------------------------------------------------------
    def _query(self, tree: exp.Expression, rng: random.Random) -> None:
        aliases = {t.alias_or_name.lower(): t.name.lower() for t in tree.find_all(exp.Table)
                   if t.name.lower() in self.tables}
        drawn: dict[tuple[str, int], dict[str, str | None]] = {}
        for literal in list(tree.find_all(exp.Literal)):
            if literal.find_ancestor(*_STRUCTURE) is not None:
                continue
            top, predicate = _climb(literal)
            column = _compared_column(predicate, top) if isinstance(predicate, _PREDICATES) else None
            where = self._resolve(column, aliases) if column is not None else None
            if where is None:
                if literal.is_string and not _logic(literal):
                    raise Unredactable("--redact-literals: a value that is compared to no column of the captured "
                                       "tables (nothing to draw it from)")
                continue
            alias, table = where
            position = predicate.expressions.index(top) if isinstance(predicate, exp.In) and \
                top in predicate.expressions else 0
            row = drawn.setdefault((alias, position), rng.choice(self._rows(table)))
            value = self._value(table, column.name, row, rng)  # type: ignore[union-attr]
            signed = literal.parent if isinstance(literal.parent, exp.Neg) else literal  # -5: the value is -5
            signed.replace(_render(value, self._type(table, column.name)))  # type: ignore[union-attr]

    def _resolve(self, column: exp.Column, aliases: dict[str, str]) -> tuple[str, str] | None:
        """(alias, table) of a column reference; None when it is not one column of one captured table."""
        if column.table:
            table = aliases.get(column.table.lower())
            return (column.table.lower(), table) if table and self._has(table, column.name) else None
        owners = sorted({(a, t) for a, t in aliases.items() if self._has(t, column.name)})
        return owners[0] if len({t for _, t in owners}) == 1 and len(owners) == 1 else None

    def _has(self, table: str, column: str) -> bool:
        return any(c.name.lower() == column.lower() for c in self.tables[table].columns)

    def _type(self, table: str, column: str) -> str:
        return next(c.type for c in self.tables[table].columns if c.name.lower() == column.lower())

    def _rows(self, table: str) -> list[dict[str, str | None]]:
        rows = self.samples[table].rows
        if not rows:
            raise Unredactable(f"--redact-literals: table {table} has no captured row to draw values from")
        return rows

    def _value(self, table: str, column: str, row: dict[str, str | None], rng: random.Random) -> str:
        name = next(c.name for c in self.tables[table].columns if c.name.lower() == column.lower())
        if row.get(name) is not None:
            return row[name]  # type: ignore[return-value]
        rows = self._rows(table)
        start = rng.randrange(len(rows))
        for other in rows[start:] + rows[:start]:
            if other.get(name) is not None:
                return other[name]  # type: ignore[return-value]
        raise Unredactable(f"--redact-literals: column {table}.{name} is NULL in every captured row")

    # writes --------------------------------------------------------------------------------------------------
    def _insert(self, tree: exp.Insert, rng: random.Random) -> None:
        target = tree.this
        node = target.this if isinstance(target, exp.Schema) else target
        table = self.tables.get(node.name.lower()) if isinstance(node, exp.Table) else None
        if table is None or not isinstance(tree.expression, exp.Values) or not table.primary_key:
            raise Unredactable("--redact-literals: an INSERT whose rows cannot be drawn from the data")
        if any(unique for _, unique, _ in table.indexes):
            raise Unredactable(f"--redact-literals: an INSERT into {table.name}, which has a unique index besides "
                               "its primary key (drawn values would collide)")
        last = table.primary_key[-1]
        if self._type(table.name.lower(), last) not in ("INTEGER", "BIGINT"):
            raise Unredactable(f"--redact-literals: an INSERT into {table.name}, whose key column {last} is not an "
                               "integer (no new key can be made for it)")
        columns = [c.name for c in target.expressions] if isinstance(target, exp.Schema) else \
            [c.name for c in table.columns]
        key = table.name.lower()
        for values in tree.expression.expressions:
            row = rng.choice(self._rows(key))
            for name, cell in zip(columns, values.expressions):
                if not isinstance(cell, (exp.Literal, exp.Neg, exp.Null, exp.Boolean)):
                    continue  # NOW(), a computed value: no data in it
                if name.lower() == last.lower():
                    self.next_key[key] = self.next_key.get(key, self.samples[key].largest.get(last, 0)) + 1
                    value: str | None = str(self.next_key[key])
                else:
                    value = row.get(next((c.name for c in table.columns if c.name.lower() == name.lower()), name))
                cell.replace(_render(value, self._type(key, name)))


def _climb(literal: exp.Expression) -> tuple[exp.Expression, exp.Expression | None]:
    """(the outermost expression the literal is the value of -- through casts, parentheses, signs and function
    calls --, the node above it)."""
    node = literal
    while isinstance(node.parent, _PASS) or (isinstance(node.parent, exp.Func)
                                             and not isinstance(node.parent, exp.AggFunc)):
        node = node.parent
    return node, node.parent


def _compared_column(predicate: exp.Expression, side: exp.Expression) -> exp.Column | None:
    """The one column on the other side of ``predicate`` from ``side``; None when there is none or several."""
    if isinstance(predicate, (exp.In, exp.Between)):
        other = predicate.this if side is not predicate.this else None
    else:
        other = predicate.left if side is predicate.right else predicate.right  # type: ignore[attr-defined]
    columns = list(other.find_all(exp.Column)) if other is not None else []
    return columns[0] if len(columns) == 1 else None


def _logic(literal: exp.Literal) -> bool:
    """A string that is part of the statement's logic: a function's argument (a format, a unit, a separator, a
    CASE result) or an INTERVAL's amount."""
    parent = literal.parent
    return isinstance(parent, exp.Interval) or (isinstance(parent, exp.Func)
                                                 and not isinstance(parent, (exp.Cast, exp.TryCast)))


def redact_plan(plan: Plan, tables: list[Table], data: Path, dialect: str) -> None:
    """Every step of ``plan`` with values drawn from ``data``; a step that cannot be is moved to ``left_out``
    (by its shape) and the others are numbered again."""
    redactor = Redactor(tables, data, dialect)
    kept = []
    for step in plan.steps:
        try:
            kept.append(redactor.step(step))
        except Unredactable as why:
            plan.left_out.append({"statement": step.group.shape, "reason": str(why)})
    plan.steps = renumber(kept)
