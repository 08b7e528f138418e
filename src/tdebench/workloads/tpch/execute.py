"""Run one query and time it from submission until its last row is fetched; cancel work that runs past a timeout."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from tdebench.api import clock
from tdebench.api.engine import Connection, Instance

T = TypeVar("T")


@dataclass
class QueryRun:
    """Result and timing of one query."""

    number: int
    columns: list[str]
    rows: list[tuple[Any, ...]]
    seconds: float


def run_query(conn: Connection, number: int, sql: str) -> QueryRun:
    """Execute ``sql`` in its own transaction, fetch every row, commit; its time in seconds (:mod:`tdebench.api.clock`)."""
    cur = conn.cursor()
    started = clock.now_ns()
    cur.execute(sql)
    rows = cur.fetchall()
    conn.commit()
    seconds = (clock.now_ns() - started) / 1e9
    columns = [str(d[0]).lower() for d in (cur.description or [])]
    cur.close()
    return QueryRun(number, columns, [tuple(r) for r in rows], seconds)


def close_quietly(conn: Connection | None) -> None:
    """Close a connection that may already be dead (its server stopped or killed): never raises."""
    if conn is None:
        return
    try:
        conn.close()
    except Exception:  # noqa: BLE001 - a dead server's connection may not close cleanly
        pass


class StepTimeout(Exception):
    """The step ran past the query timeout and was cancelled."""


def with_timeout(instance: Instance, conn: Connection, timeout: float, work: Callable[[], T]) -> T:
    """``work()``, cancelled through the instance after ``timeout`` seconds (0: never); StepTimeout then."""
    if timeout <= 0:
        return work()
    fired = threading.Event()

    def cancel() -> None:
        fired.set()
        instance.interrupt(conn)

    timer = threading.Timer(timeout, cancel)
    timer.start()
    try:
        return work()
    except Exception:
        if fired.is_set():
            raise StepTimeout(f"timed out after {timeout:g} s") from None
        raise
    finally:
        timer.cancel()
