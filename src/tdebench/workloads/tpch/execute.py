"""Run one query and time it from submission until its last row is fetched."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from tdebench.api.engine import Connection


@dataclass
class QueryRun:
    """Result and timing of one query."""

    number: int
    columns: list[str]
    rows: list[tuple[Any, ...]]
    seconds: float


def run_query(conn: Connection, number: int, sql: str) -> QueryRun:
    """Execute ``sql`` in its own transaction, fetch every row, commit; wall time in seconds."""
    cur = conn.cursor()
    started = time.perf_counter_ns()
    cur.execute(sql)
    rows = cur.fetchall()
    conn.commit()
    seconds = (time.perf_counter_ns() - started) / 1e9
    columns = [d[0].lower() for d in (cur.description or [])]
    cur.close()
    return QueryRun(number, columns, [tuple(r) for r in rows], seconds)
