"""The TPC-H power test's query stream: stream 0's 22 queries, one session, in spec order."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tdebench.engines.base import Instance
from tdebench.workloads.tpch import params
from tdebench.workloads.tpch.execute import QueryRun, run_query
from tdebench.workloads.tpch.streams import POWER_STREAM, stream_order


@dataclass
class StreamResult:
    """Query runs of one stream in execution order, plus failures and the stream's wall time."""

    stream: int
    runs: list[QueryRun] = field(default_factory=list)
    failures: dict[int, str] = field(default_factory=dict)
    wall_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


def run_stream(instance: Instance, dialect: str, sf: float, stream: int = POWER_STREAM,
               on_query: Callable[[QueryRun], None] | None = None) -> StreamResult:
    """Run the 22 queries of ``stream`` on one new connection; a failing query is recorded, not fatal."""
    result = StreamResult(stream)
    conn = instance.connect()
    started = time.perf_counter_ns()
    try:
        for number in stream_order(stream):
            sql = params.render_query(number, dialect, sf)
            try:
                run = run_query(conn, number, sql)
            except Exception as exc:  # noqa: BLE001 - any driver error fails this query only
                result.failures[number] = f"{type(exc).__name__}: {exc}"
                try:
                    conn.rollback()
                except Exception:  # noqa: BLE001
                    pass
                continue
            result.runs.append(run)
            if on_query:
                on_query(run)
    finally:
        result.wall_seconds = (time.perf_counter_ns() - started) / 1e9
        conn.close()
    return result
