"""TPC-H's power test as interleavable steps (``--schedule query``): one step per query of stream 0.

:meth:`PowerSteps.begin` applies RF1 and opens the stream's session, kept open across the steps as in the block
schedule (one session per stream); :meth:`PowerSteps.run_step` runs one query once; :meth:`PowerSteps.finish`
closes the session, records one elapsed value per query (the mean of its ``--repeat`` runs) and their total,
applies RF2, computes Power@Size from those values, then runs the throughput test as a whole when it is
selected. A query that fails or times out in any run is recorded as failed for the trial.
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import fmean

from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import SteppedTrial
from tdebench.workloads.tpch import params
from tdebench.workloads.tpch.execute import QueryRun, close_quietly
from tdebench.workloads.tpch.power import ServerGone, StreamResult, _rollback, _timed_query
from tdebench.workloads.tpch.refresh import RefreshTiming
from tdebench.workloads.tpch.streams import POWER_STREAM, stream_order
from tdebench.workloads.tpch.trial import TrialPlan, finish_trial, record_power, run_refresh


class PowerSteps(SteppedTrial):
    """One config's power test, query by query."""

    def __init__(self, state: ConfigState, plan: TrialPlan, rec: Recorder,
                 after: Callable[[TrialResult], None]) -> None:
        self.state = state
        self.plan = plan
        self.rec = rec
        self.after = after  # the workload's checks once the trial is done (row counts after the refreshes)
        self.steps = tuple(f"q{n:02d}" for n in stream_order(POWER_STREAM) if not plan.queries or n in plan.queries)
        self.runs: dict[int, list[QueryRun]] = {}
        self.stream = StreamResult(POWER_STREAM)
        self.rf1: RefreshTiming | None = None
        self.conn = None

    def begin(self) -> None:
        if self.plan.power_set is not None:
            self.rf1 = run_refresh(self.state.instance, self.state.dialect, self.plan, self.rec, "rf1")
        self.conn = self.state.instance.connect()

    def run_step(self, step: str, repetition: int) -> None:
        number = int(step[1:])
        if number in self.stream.failures or number in self.stream.timeouts:
            return  # failed in an earlier run: the trial records it as failed
        sql = params.render_query(number, self.state.dialect.family, self.plan.sf)
        instance, mark = self.state.instance, self.plan.mark
        if mark:
            mark(step)
        try:
            run, timed_out = _timed_query(instance, self.conn, number, sql, self.plan.query_timeout)
        except Exception as exc:  # noqa: BLE001 - any driver error fails this query only
            if not instance.alive():
                raise ServerGone(f"server stopped during {step}: {exc}") from exc
            self.stream.failures[number] = f"{type(exc).__name__}: {exc}"
            _rollback(self.conn)
            return
        finally:
            if mark:
                mark(None)
        if timed_out:
            self.stream.timeouts[number] = self.plan.query_timeout
            _rollback(self.conn)
            return
        assert run is not None
        if repetition > 0:
            run.rows = []  # the first run's rows are the answer; the others only count their time
        self.runs.setdefault(number, []).append(run)

    def finish(self) -> TrialResult:
        self.abort()
        out = TrialResult()
        for number in stream_order(POWER_STREAM):
            runs = self.runs.get(number)
            if runs and number not in self.stream.failures and number not in self.stream.timeouts:
                first = runs[0]
                self.stream.runs.append(QueryRun(number, first.columns, first.rows, fmean(r.seconds for r in runs)))
        rf2 = None
        if self.plan.power_set is not None:
            rf2 = run_refresh(self.state.instance, self.state.dialect, self.plan, self.rec, "rf2")
            out.sets_applied.append(self.plan.power_set)
        record_power(self.rec, self.plan, self.stream, out, self.rf1, rf2)
        finish_trial(self.state.instance, self.state.dialect, self.plan, self.rec, out)
        self.after(out)
        return out

    def abort(self) -> None:
        conn, self.conn = self.conn, None
        close_quietly(conn)
