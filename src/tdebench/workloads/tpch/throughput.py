"""The TPC-H throughput test: S query streams in parallel plus one refresh stream of S RF1/RF2 pairs."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.workloads.tpch.power import StreamResult, run_stream
from tdebench.workloads.tpch.refresh import RefreshSet, RefreshTiming, apply_rf1, apply_rf2


@dataclass
class ThroughputResult:
    """Every stream's result, the refresh stream's timings and Ts (wall time of the whole test)."""

    streams: list[StreamResult] = field(default_factory=list)
    refreshes: list[RefreshTiming] = field(default_factory=list)
    refresh_error: str | None = None
    ts_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.refresh_error is None and all(s.ok for s in self.streams)


def _refresh_stream(instance: Instance, dialect: Dialect, sets: list[RefreshSet], out: ThroughputResult) -> None:
    try:
        conn = instance.connect()
        try:
            for rs in sets:
                out.refreshes.append(apply_rf1(conn, dialect, rs))
                out.refreshes.append(apply_rf2(conn, dialect, rs))
        finally:
            conn.close()
    except Exception as exc:  # noqa: BLE001 - reported as this test's failure
        out.refresh_error = f"{type(exc).__name__}: {exc}"


def run_throughput(instance: Instance, dialect: Dialect, sf: float, streams: int, sets: list[RefreshSet],
                   query_timeout: float = 0.0) -> ThroughputResult:
    """Run streams 1..S (one connection each) and the refresh stream concurrently; Ts spans all of them."""
    result = ThroughputResult(streams=[StreamResult(s) for s in range(1, streams + 1)])

    def query_stream(index: int) -> None:
        result.streams[index] = run_stream(instance, dialect, sf, index + 1, query_timeout=query_timeout)

    threads = [threading.Thread(target=query_stream, args=(i,), name=f"tpch-stream-{i + 1}") for i in range(streams)]
    threads.append(threading.Thread(target=_refresh_stream, args=(instance, dialect, sets, result),
                                    name="tpch-refresh-stream"))
    started = time.perf_counter_ns()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.ts_seconds = (time.perf_counter_ns() - started) / 1e9
    return result
