"""A user's statements on one connection under ``--schedule query``: each statement in turn, every config
running it in a fresh random order per round, so that twins run the same statement seconds apart.

One visit (a config's turn at a statement in a round) runs the statement a fixed number of times, the same on every
config, so that a visit measures about ``slice`` seconds and a statement about ``duration`` seconds per config and
block (:class:`Visits`); a write runs its undo right after each execution, untimed and outside the step's marks, so
that it can run again and no read sees its rows. A write whose data is restored by snapshot (``restore =
"snapshot"``) runs once per block. Per block and config: one time per statement (``elapsed``: the trimmed geometric
mean of its visits' mean times, the fastest and slowest fifth left out, so that a visit a stall of the machine
slowed, on either twin, does not move the block's value; ``mean_elapsed``: the arithmetic mean of every execution,
stalls included), and the headlines ``reads``, ``writes`` and ``total`` (the weighted sums of ``elapsed``,
:func:`tdebench.workloads.sql.steps.record_totals`); per visit its mean time (``visit_elapsed``, with its
``round``), which shows how much of the noise is within a block. The first execution's rows of every query are its
answer, compared with the plain twin's block by block.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from statistics import fmean
from typing import Protocol

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Connection
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import SteppedTrial
from tdebench.encryption import redact
from tdebench.workloads.sql import answer_check
from tdebench.workloads.sql.layout import Step, WorkloadDir
from tdebench.workloads.sql.settler import Settler
from tdebench.workloads.sql.steps import StepRun, record_totals, rollback, run_write
from tdebench.workloads.tpch.execute import StepTimeout, close_quietly

TEST = "sql"


class StepRunner(Protocol):
    """What the steps need of the workload: its directory, how writes are restored, how one step runs, and the
    check that the undo files put the data back."""

    wd: WorkloadDir
    steps: list[Step]
    restore: str

    def _run(self, state: ConfigState, conn: Connection, step: Step,
             statements: list[str] | None = None) -> StepRun: ...
    def check_counts(self, state: ConfigState, conn: Connection) -> list[str]: ...


class SqlSteps(SteppedTrial):
    """One config's statements of one block, visit by visit."""

    def __init__(self, owner: StepRunner, state: ConfigState, rec: Recorder, visits: "Visits",
                 rounds: int, block: int = 0) -> None:
        self.owner, self.state, self.rec, self.plan = owner, state, rec, visits
        self.block = block
        self.steps = tuple(s.name for s in owner.steps)
        self.rounds = rounds
        self.warmup_rounds = 1
        self.by_name = {s.name: s for s in owner.steps}
        self.times: dict[str, list[float]] = {}
        self.visit_means: dict[str, list[float]] = {}
        self.failed: dict[str, str] = {}  # step -> "failed" or "timeout"
        self.digests: dict[str, str] = {}
        self.result = TrialResult()
        self.conn: Connection | None = None
        self.settler = Settler(state.instance.connect, state.dialect)

    @property
    def dialect(self) -> Dialect:
        return self.state.dialect

    def begin(self) -> None:
        self.conn = self.state.instance.connect()

    def run_step(self, step: str, repetition: int) -> None:
        s = self.by_name[step]
        once = s.kind == "write" and self.owner.restore != "undo"
        known = self.plan.known(step, self.state.label, self.block)
        if step in self.failed or (known and repetition >= self.plan.visits[step]) or (once and repetition > 0):
            return
        family = self.dialect.family
        statements = self.owner.wd.statements(s.sql, family)
        undo = self.owner.wd.statements(s.undo, family) if s.undo is not None and not once else None
        if s.kind == "query":
            self.state.mark(step)
        try:
            started, runs, timed = time.perf_counter(), 0, 0.0
            while runs < (1 if once else self.plan.runs.get(step, self.plan.cap)):
                if not self._execute(s, statements, undo):
                    return
                runs += 1
                timed += self.times[step][-1]
                if not known and self.plan.full(timed, time.perf_counter() - started):
                    break
            if not known:
                self.plan.record(step, self.state.label, self.block, runs, timed)
        finally:
            if s.kind == "query":
                self.state.mark(None)
        visit = fmean(self.times[step][-runs:])  # paired by round: where the noise is (docs/precision.md)
        self.visit_means.setdefault(step, []).append(visit)
        self.rec.add(TEST, step, "visit_elapsed", visit, "s", round=repetition + 1)

    def _execute(self, s: Step, statements: list[str], undo: list[str] | None) -> bool:
        """One execution (a write: then its undo, untimed); False once the step failed for this block."""
        assert self.conn is not None
        if s.kind == "write":
            self.state.mark(s.name)
        try:
            run = self.owner._run(self.state, self.conn, s, statements)
        except StepTimeout as exc:
            return self._fail(s.name, "timeout", f"{s.name}: {exc}")
        except Exception as exc:  # noqa: BLE001 - recorded; the other steps still run
            if not self.state.instance.alive():
                raise
            return self._fail(s.name, "failed", f"{s.name}: {type(exc).__name__}: {redact(str(exc))}")
        finally:
            if s.kind == "write":
                self.state.mark(None)
        self.times.setdefault(s.name, []).append(run.seconds)
        if s.kind == "query" and s.name not in self.digests:
            self.digests[s.name] = answer_check.digest(answer_check.normalize(run.rows))
        if undo is not None:
            try:
                run_write(self.conn, self.dialect, undo)
            except Exception as exc:  # noqa: BLE001
                return self._fail(s.name, "failed", f"undo of {s.name}: {type(exc).__name__}: {redact(str(exc))}")
            # the purge of what the undo deleted would otherwise land in the next timed write, more of it round by
            # round (docs/workloads/sql.md, "How the statements run")
            self.settler.settle(self.conn)
        return True

    def _fail(self, step: str, status: str, text: str) -> bool:
        assert self.conn is not None
        rollback(self.conn, self.dialect)
        self.failed[step] = status
        self.result.failures.append(text)
        self.result.timeouts += status == "timeout"
        return False

    def finish(self) -> TrialResult:
        """Check the data after the undos, record one time per statement and the headlines."""
        try:
            if self.conn is not None and self.owner.restore == "undo":
                self.result.failures += self.owner.check_counts(self.state, self.conn)
        finally:
            self.abort()
        values: dict[str, float] = {}
        means: dict[str, float] = {}
        for position, name in enumerate(self.by_name, start=1):
            if name in self.failed:
                self.rec.add(TEST, name, "elapsed", float("nan"), "s", status=self.failed[name])
                continue
            times = self.times.get(name, [])
            if not times:
                continue
            values[name] = trimmed_geometric_mean(self.visit_means.get(name) or times)
            self.rec.add(TEST, name, "elapsed", values[name], "s")
            means[name] = fmean(times)
            self.rec.add(TEST, name, "mean_elapsed", means[name], "s")
            self.rec.add(TEST, name, "runs", len(times), "runs")
            if name in self.digests:
                self.result.answer_digest[position] = self.digests[name]
        for metric, per_step in (("elapsed", values), ("mean_elapsed", means)):
            record_totals(self.rec, TEST, "", list(self.by_name.values()), per_step, set(self.failed),
                          skipped=self.skipped, metric=metric)
        return self.result

    def abort(self) -> None:
        self.settler.close()
        conn, self.conn = self.conn, None
        close_quietly(conn)


#: the share of a statement's visits left out at each end of a block's trimmed geometric mean
TRIM = 0.2


def trimmed_geometric_mean(values: list[float], trim: float = TRIM) -> float:
    """exp of scipy's trimmed mean of the logs: ``int(trim * n)`` values left out at each end (none below 5)."""
    import numpy as np  # the runner has loaded both for its statistics by the time a block ends
    from scipy.stats import trim_mean

    return float(np.exp(trim_mean(np.log(values), trim)))


@dataclass
class Visits:
    """How often each statement runs per config and block, the same on every config: ``runs`` executions per
    visit, in its first ``visits`` rounds of the block. Both come from every config's first visit of each statement
    (in the first block, the warm-up when there is one), which runs until its timed executions add up to ``visit``
    seconds (at most ``cap`` times, and at most as often as a config before it managed): a write's untimed undo
    does not count, so a write is measured as long as a query, not a tenth as long when its undo takes nine times
    its own time; the visit ends anyway after ``WALL`` visits' worth of wall time. ``runs`` is the fewest any
    config managed, so that the slowest config's visit, not the fastest's, lasts about ``visit`` seconds (a
    statement SQLite runs 100 times in 100 ms would otherwise make a server engine's visit last seconds);
    ``visits`` the visits of the slowest config's measured length that fit in ``duration`` (at least 1, at most
    ``rounds``). So a statement slower than a visit runs once per visit, and in fewer rounds when ``duration``
    leaves time for fewer runs."""

    #: a first visit ends after this many visits' length of wall time, however little of it was timed
    WALL = 10

    visit: float
    duration: float
    rounds: int
    cap: int = 1000
    runs: dict[str, int] = field(default_factory=dict)
    visits: dict[str, int] = field(default_factory=dict)
    #: per statement: the block of its first visits, the configs that made one, the slowest time per execution
    first_block: dict[str, int] = field(default_factory=dict)
    seen: dict[str, set[str]] = field(default_factory=dict)
    per_run: dict[str, float] = field(default_factory=dict)

    def full(self, timed: float, wall: float) -> bool:
        """Whether a first visit has run long enough: ``timed`` seconds measured in ``wall`` seconds."""
        return timed >= self.visit or wall >= self.WALL * self.visit

    def known(self, step: str, config: str, block: int) -> bool:
        """Whether ``config``'s visit of ``step`` in ``block`` runs the planned count (else it is a first visit)."""
        return step in self.runs and (block != self.first_block[step] or config in self.seen[step])

    def record(self, step: str, config: str, block: int, runs: int, seconds: float) -> None:
        """``config``'s first visit of ``step``: ``runs`` executions measured for ``seconds`` in all."""
        self.first_block.setdefault(step, block)
        self.seen.setdefault(step, set()).add(config)
        self.runs[step] = min(runs, self.runs.get(step, runs))
        self.per_run[step] = max(seconds / max(runs, 1), self.per_run.get(step, 0.0))
        measured = self.runs[step] * self.per_run[step]
        self.visits[step] = max(1, min(self.rounds, round(self.duration / max(measured, 1e-9))))

    def as_json(self) -> dict[str, dict[str, int]]:
        return {"runs_per_visit": dict(self.runs), "visits_per_block": dict(self.visits)}
