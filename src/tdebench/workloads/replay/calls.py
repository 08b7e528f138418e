"""The calls a log holds, as the replay runs them: per session in their order, with the think time before each
(the gap since the session's previous statement ended, where the log's time stamps are finer than a second),
grouped by normalized form into digests named ``dNN_<table>`` by total time in the log. Statements that carry a
password or a key are never replayed (counted with the other skipped ones)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tdebench.sqltext import serverlog
from tdebench.sqltext.dialects import family_sqlglot
from tdebench.sqltext.normal import normalize, parse, statement_kind, tables_of
from tdebench.sqltext.tree import exp


@dataclass
class Call:
    position: int  # in the log's order, from 1
    session: str
    text: str
    digest: str  # dNN_<table>
    kind: str  # query or write
    think: float  # seconds before it (0: none, or not known)
    undo: str | None = None  # an INSERT of literal rows with their primary key: what deletes them again
    at: float | None = None  # when the log says it started (seconds since the epoch), where it says


@dataclass
class LogPlan:
    fmt: str
    calls: list[Call]
    sessions: dict[str, list[Call]]
    digests: dict[str, str]  # name -> normalized form
    skipped: int  # statements of the log that are not the workload's (session commands, other tables)
    timed: bool  # the time stamps are finer than a second: think times replayed
    other_writes: list[str] = field(default_factory=list)  # UPDATE, DELETE, ...: no undo after the trial


def _undo(tree: exp.Expression, keys: dict[str, list[str]]) -> str | None:
    """``DELETE`` of the rows an ``INSERT ... VALUES`` of literal keys adds; None when it cannot be derived."""
    if not isinstance(tree, exp.Insert) or not isinstance(tree.expression, exp.Values):
        return None
    target = tree.this
    table = target.this if isinstance(target, exp.Schema) else target
    if not isinstance(table, exp.Table) or table.name.lower() not in keys:
        return None
    columns = [c.name.lower() for c in target.expressions] if isinstance(target, exp.Schema) else []
    key = keys[table.name.lower()]
    if not key or any(k not in columns for k in key):
        return None
    conditions = []
    for row in tree.expression.expressions:
        cells = dict(zip(columns, row.expressions))
        if not all(isinstance(cells[k], exp.Literal) for k in key):
            return None
        conditions.append("(" + " AND ".join(f"{k} = {cells[k].sql()}" for k in key) + ")")
    return f"DELETE FROM {table.name} WHERE {' OR '.join(conditions)}"


def read_calls(path: Path, family: str, tables: set[str], keys: dict[str, list[str]],
               database: str | None) -> LogPlan:
    """Every call of the log on ``tables``; ``keys``: table -> primary key columns (for the INSERTs' undo)."""
    kind = family_sqlglot(family)  # sqlglot's dialect of the family the log is written in
    credentials: Counter[str] = Counter()  # statements that carry a password or key: never replayed
    fmt, stream = serverlog.stream_log(path, credentials)
    found: list[tuple[serverlog.Logged, str, str, exp.Expression]] = []
    skipped, seen = 0, 0
    for logged in stream:
        seen += 1
        tree = parse(logged.text, kind)
        what = statement_kind(tree) if tree is not None else None
        used = tables_of(tree) if tree is not None else set()
        if what is None or not used or not used <= tables or \
                (database and logged.database and logged.database.lower() != database.lower()):
            skipped += 1
            continue
        found.append((logged, normalize(tree, kind), what, tree))
    if not seen and not credentials:
        raise serverlog.no_statements(path, fmt)
    skipped += sum(credentials.values())
    totals: dict[str, float] = {}
    first_table: dict[str, str] = {}
    for logged, key, _, tree in found:
        totals[key] = totals.get(key, 0.0) + (logged.seconds or 0.0)
        first_table.setdefault(key, sorted(tables_of(tree))[0])
    ranked = sorted(totals, key=lambda k: (-totals[k], k))
    names = {key: f"d{i:02d}_{first_table[key]}"[:63] for i, key in enumerate(ranked, 1)}
    stamps = [logged.at for logged, *_ in found if logged.at is not None]
    timed = bool(stamps) and any(s != int(s) for s in stamps)
    plan = LogPlan(fmt, [], {}, {n: k for k, n in names.items()}, skipped, timed)
    ended: dict[str, float] = {}
    for position, (logged, key, what, tree) in enumerate(found, 1):
        think = 0.0
        if timed and logged.at is not None and logged.session in ended:
            think = max(0.0, logged.at - ended[logged.session])
        if logged.at is not None:
            ended[logged.session] = logged.at + (logged.seconds or 0.0)
        undo = _undo(tree, keys) if what == "write" else None
        if what == "write" and undo is None:
            plan.other_writes.append(names[key])
        call = Call(position, logged.session, tree.sql(dialect=kind), names[key], what, think, undo, logged.at)
        plan.calls.append(call)
        plan.sessions.setdefault(logged.session, []).append(call)
    return plan
