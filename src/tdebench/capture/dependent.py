"""Writes that need another write. The rows the window's INSERTs added are left out of the captured data, and the
sql workload runs every write on its own, followed by its undo: an INSERT whose foreign key points to such a row
(a checkout's order lines, pointing to the order inserted just before) finds no row and fails on every run.

Such an INSERT is joined to the kept INSERT that adds the row it needs, as the application's transaction did: one
step, the parent's statement first, the undos the other way round; the step keeps the parent's call count as its
weight. The call it takes is one that points to the rows the parent's step adds (the first such among the calls
kept in :attr:`~tdebench.capture.statements.Group.samples`), or one that needs no new row at all. An INSERT that
none of its calls lets run is listed as left out, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tdebench.capture.catalog import Table
from tdebench.capture.steps import Plan, Step, insert_rows, insert_undo, key_of, renumber
from tdebench.sqltext.normal import parse
from tdebench.sqltext.tree import exp

Keys = dict[str, set[tuple[str, ...]]]  # table (lower case) -> primary keys


@dataclass
class _Write:
    """A kept INSERT: its table, the keys its call adds, and the steps joined to it."""

    step: Step
    table: str
    keys: set[tuple[str, ...]]
    joined: list[Step] = field(default_factory=list)
    root: "_Write | None" = None
    left_out: bool = False

    def top(self) -> "_Write":
        node = self
        while node.root is not None:
            node = node.root
        return node


def needed(sql: str, tables: dict[str, Table], added: Keys, dialect: str) -> Keys | None:
    """The rows the window added (parent table -> keys) that the INSERT ``sql`` points to by a foreign key; None
    when it is no INSERT of literal rows."""
    tree = parse(sql, dialect)
    found = insert_rows(tree, tables) if isinstance(tree, exp.Insert) else None
    if found is None or isinstance(found, str):
        return None
    table, rows = found
    out: Keys = {}
    for columns, parent_name, parent_columns in table.foreign_keys:
        parent = tables.get(parent_name.lower())
        if parent is None or not parent.primary_key:
            continue
        by_parent = dict(zip([c or k for c, k in zip(parent_columns, parent.primary_key)], columns))
        if set(by_parent) != set(parent.primary_key):
            continue  # a foreign key to another unique key: the window's rows are noted by primary key only
        for cells in rows:
            key = key_of(cells, [by_parent[k] for k in parent.primary_key])
            if key is not None and key in added.get(parent.name.lower(), set()):
                out.setdefault(parent.name.lower(), set()).add(key)
    return out


def _providers(need: Keys, writes: dict[str, _Write], own: _Write) -> list[_Write] | None:
    """The kept INSERTs that add every needed row (one per parent table), None when some row has none."""
    out = []
    for table, keys in need.items():
        found = next((w for w in writes.values()
                      if w is not own and not w.left_out and w.table == table and keys <= w.keys), None)
        if found is None:
            return None
        out.append(found)
    return out


def _choose(write: _Write, tables: dict[str, Table], added: Keys, dialect: str, writes: dict[str, _Write],
            samples: bool) -> tuple[str, list[_Write]] | str:
    """(the call to keep, the writes it needs), or why none of its calls can run (``samples``: other calls than
    the step's may be taken)."""
    parents: set[str] = set()
    for sql in (write.step.group.samples if samples else []) or [write.step.sql]:
        need = needed(sql, tables, added, dialect)
        if need is None:
            continue
        if not need:
            return sql, []
        parents.update(need)
        providers = _providers(need, writes, write)
        if providers is not None:
            return sql, providers
    return (f"a write kept out: its foreign key points to {', '.join(sorted(parents))} rows that the window's "
            f"INSERTs added, which are left out of the captured data, and no kept INSERT adds them (it cannot run "
            f"on its own; --top larger may keep the INSERT it needs)")


def _join(into: _Write, other: _Write) -> None:
    """``other``'s statements after ``into``'s, its undo before."""
    a, b = into.step, other.step
    a.sql = a.sql.rstrip().rstrip(";") + ";\n" + b.sql.rstrip().rstrip(";")
    a.undo = (b.undo or "").rstrip().rstrip(";") + ";\n" + (a.undo or "").rstrip().rstrip(";")
    into.joined += [other.step, *other.joined]
    other.root = into


def _depth(table: str, tables: dict[str, Table], seen: frozenset[str] = frozenset()) -> int:
    """How many foreign keys lead from ``table`` up to a table that has none (a cycle ends the count)."""
    parents = [p.lower() for _, p, _ in tables[table].foreign_keys if p.lower() in tables and p.lower() not in seen]
    return 1 + max((_depth(p, tables, seen | {table}) for p in parents), default=-1)


def join_dependent_writes(plan: Plan, tables: list[Table], added: Keys, dialect: str, samples: bool = True) -> None:
    """Join every kept INSERT that needs a row the window added to the kept INSERT that adds it; leave out those
    that cannot run (``added``: the window's new rows, by table; ``samples``: a step may take another of its
    calls, False once the statements' values were redacted)."""
    by_name = {t.name.lower(): t for t in tables}
    added = {t.lower(): keys for t, keys in added.items()}
    writes: dict[str, _Write] = {}
    for step in plan.steps:
        tree = parse(step.sql, dialect) if step.kind == "write" else None
        derived = insert_undo(tree, by_name) if isinstance(tree, exp.Insert) else None
        if isinstance(derived, tuple):
            writes[step.name] = _Write(step, derived[0].lower(), derived[2])
    dropped: set[str] = set()
    # parents first: a step's call is settled before another's is chosen to point to the rows it adds
    for write in sorted(writes.values(), key=lambda w: _depth(w.table, by_name)):
        chosen = _choose(write, by_name, added, dialect, writes, samples)
        if isinstance(chosen, str):
            plan.left_out.append({"statement": write.step.group.shape, "reason": chosen})
            write.left_out = True
            dropped.add(write.step.name)
            continue
        sql, providers = chosen
        if sql != write.step.sql:  # the parent's call adds the rows this call points to
            tree = parse(sql, dialect)
            derived = insert_undo(tree, by_name) if isinstance(tree, exp.Insert) else None
            assert isinstance(derived, tuple)  # the sample is of the same form as the step's call
            write.step.sql, write.step.undo, write.keys = sql, derived[1], derived[2]
        for provider in providers:
            top, mine = provider.top(), write.top()
            if top is not mine:
                _join(top, mine)
                dropped.add(mine.step.name)
    plan.steps = renumber([s for s in plan.steps if s.name not in dropped])
    for write in writes.values():
        write.step.joined = write.joined
