"""Running a user's steps on one connection: a query (every row fetched) or a write (its statements in one
transaction), timed from submission to the last row or the commit, cancelled after the query timeout."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Connection
from tdebench.workloads.tpch import execute


@dataclass
class StepRun:
    """Wall seconds of one step, and the rows of a query."""

    seconds: float
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)


def begin(conn: Connection, dialect: Dialect) -> None:
    """Open one explicit transaction where the connection would commit every statement by itself."""
    if dialect.autocommit and not getattr(conn, "in_transaction", False):
        conn.cursor().execute(dialect.begin_sql)


def rollback(conn: Connection, dialect: Dialect) -> None:
    """Roll back what a failed step left open (never raises: the connection may be gone)."""
    try:
        if dialect.autocommit:
            if getattr(conn, "in_transaction", False):
                conn.cursor().execute("ROLLBACK")
        else:
            conn.rollback()
    except Exception:  # noqa: BLE001 - the step's own error is what gets recorded
        pass


def run_query(conn: Connection, sql: str) -> StepRun:
    """One query: executed, every row fetched, committed."""
    run = execute.run_query(conn, 0, sql)
    return StepRun(run.seconds, run.rows, run.columns)


def run_write(conn: Connection, dialect: Dialect, statements: Sequence[str]) -> StepRun:
    """Statements in one transaction, committed."""
    started = time.perf_counter_ns()
    begin(conn, dialect)
    cur = conn.cursor()
    for statement in statements:
        cur.execute(statement)
    if dialect.autocommit:
        cur.execute("COMMIT")
    else:
        conn.commit()
    return StepRun((time.perf_counter_ns() - started) / 1e9)


def record_totals(rec: Any, test: str, prefix: str, steps: Sequence[Any], values: dict[str, float],
                  failed: set[str], round: int | None = None, skipped: frozenset[str] = frozenset(),
                  metric: str = "elapsed") -> None:
    """The headlines of a user's workload from one value per step (a time per execution): ``reads`` (the queries'
    weighted total), ``writes`` (the writes', when there are any) and ``total`` (both), each recorded as failed when
    one of its steps failed (its partial sum is then kept but left out of every statistic), and not recorded at all
    when one of its steps was ``skipped`` (left out of the block: its figures had met their precision targets);
    under ``metric`` (``elapsed``, or ``mean_elapsed`` for the totals of the arithmetic means)."""
    sums = {"reads": 0.0, "writes": 0.0}
    bad = {"reads": False, "writes": False}
    left_out = {"reads": False, "writes": False}
    for step in steps:
        part = "reads" if step.kind == "query" else "writes"
        if step.name in skipped:
            left_out[part] = True
        elif step.name in failed or step.name not in values:
            bad[part] = True
        else:
            sums[part] += step.weight * values[step.name]
    has_writes = any(s.kind == "write" for s in steps)
    for part in ("reads", "writes") if has_writes else ("reads",):
        if not left_out[part]:
            rec.add(test, f"{prefix}{part}", metric, sums[part], "s", status="failed" if bad[part] else None,
                    round=round)
    if not any(left_out.values()):
        rec.add(test, f"{prefix}total", metric, sums["reads"] + sums["writes"], "s",
                status="failed" if bad["reads"] or bad["writes"] else None, round=round)
