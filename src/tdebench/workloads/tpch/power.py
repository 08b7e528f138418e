"""One TPC-H query stream: 22 queries, one session, in the stream's spec order (stream 0 = power test)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.workloads.tpch import params
from tdebench.workloads.tpch.execute import QueryRun, StepTimeout, run_query, with_timeout
from tdebench.workloads.tpch.streams import POWER_STREAM, stream_order


class ServerGone(Exception):
    """The server died during a stream: the trial fails, the run goes on."""


@dataclass
class StreamResult:
    """Query runs of one stream in execution order, plus failures/timeouts and the stream's wall time."""

    stream: int
    runs: list[QueryRun] = field(default_factory=list)
    failures: dict[int, str] = field(default_factory=dict)
    timeouts: dict[int, float] = field(default_factory=dict)
    wall_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures and not self.timeouts


def _timed_query(instance: Instance, conn, number: int, sql: str, timeout: float) -> tuple[QueryRun | None, bool]:
    """Run one query; with a timeout, a timer interrupts it. Returns (run, timed_out)."""
    try:
        return with_timeout(instance, conn, timeout, lambda: run_query(conn, number, sql)), False
    except StepTimeout:
        return None, True


def run_stream(instance: Instance, dialect: Dialect, sf: float, stream: int = POWER_STREAM,
               on_query: Callable[[QueryRun], None] | None = None, query_timeout: float = 0.0,
               mark: Callable[[str | None], None] | None = None, queries: tuple[int, ...] = ()) -> StreamResult:
    """Run the 22 queries of ``stream`` (only ``queries`` when given) in the stream's order on one new connection;
    a failing query is recorded, not fatal.

    Raises :class:`ServerGone` when a query fails because the server is no longer running.
    """
    result = StreamResult(stream)
    conn = instance.connect()
    started = time.perf_counter_ns()
    try:
        for number in stream_order(stream):
            if queries and number not in queries:
                continue
            sql = params.render_query(number, dialect.family, sf)
            if mark:
                mark(f"q{number:02d}")
            try:
                run, timed_out = _timed_query(instance, conn, number, sql, query_timeout)
            except Exception as exc:  # noqa: BLE001 - any driver error fails this query only
                if not instance.alive():
                    raise ServerGone(f"server stopped during q{number:02d} of stream {stream}: {exc}") from exc
                result.failures[number] = f"{type(exc).__name__}: {exc}"
                _rollback(conn)
                continue
            if timed_out:
                result.timeouts[number] = query_timeout
                _rollback(conn)
                continue
            assert run is not None
            result.runs.append(run)
            if on_query:
                on_query(run)
    finally:
        result.wall_seconds = (time.perf_counter_ns() - started) / 1e9
        if mark:
            mark(None)
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - a dead server's connection may not close cleanly
            pass
    return result


def _rollback(conn) -> None:
    try:
        conn.rollback()
    except Exception:  # noqa: BLE001
        pass
