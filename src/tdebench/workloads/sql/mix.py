"""A user's statement mix on N connections under ``--schedule query`` (``--vus N``): slices alternating between
the twins, as TPC-C's virtual users do (:mod:`tdebench.workloads.tpcc.slices`).

Per block and VU count, each config gets N connections (threads of tdebench, each with its own connection),
connected once and ramped up once (``rampup``; the other configs' connections wait, connected and idle). Then
``ceil(duration / slice)`` rounds: in each, every config in a fresh random order runs one slice of ``slice``
seconds, in which each connection draws statements from the mix (weighted by ``[weights]``, from a seeded
generator per block and connection, so twins draw the same sequence) and runs them back to back. Only one config's
connections run at a time. A write and its undo (untimed) run under a lock of the config, so that two connections
never add the same rows at once; its time is counted from when it holds the lock. A statement that starts in a
slice counts in it, whenever it ends.

Recorded per block and VU count (test ``sql``, steps ``vuN.<name>``): each statement's mean time per execution
(``elapsed``), its ``latency_p95`` and ``runs``; the headlines ``vuN.reads``, ``vuN.writes`` and ``vuN.total`` (the
weighted sums of the means, :func:`tdebench.workloads.sql.steps.record_totals`); per slice (with its ``round``) the
statements per second, the server's CPU per statement and the engine's counters per statement
(:func:`tdebench.workloads.slicing.record_slice_costs`). Answers are not compared: concurrent writes change what
a read sees.
"""

from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

import numpy as np

from tdebench.api.engine import Connection
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import SteppedTrial
from tdebench.encryption import redact
from tdebench.workloads.slicing import SliceProbe, record_slice_costs, warmup_rounds_for
from tdebench.workloads.sql.layout import Step
from tdebench.workloads.sql.steps import record_totals, rollback, run_write
from tdebench.workloads.tpch.execute import StepTimeout

TEST = "sql"


@dataclass
class SliceResult:
    """What the connections of one config did in one slice (or the ramp-up)."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # statement -> first error
    timeouts: set[str] = field(default_factory=set)
    seconds: float = 0.0

    @property
    def runs(self) -> int:
        return sum(len(v) for v in self.latencies.values())


class _Connection(threading.Thread):
    """One connection running the mix slice after slice."""

    def __init__(self, pool: "MixPool", index: int) -> None:
        super().__init__(daemon=True, name=f"tdebench-sql-vu{index + 1}")
        self.pool, self.index = pool, index
        self.rng = random.Random(f"{pool.seed}:{index}")
        self.go = threading.Event()
        self.deadline = 0.0
        self.result = SliceResult()
        self.conn: Connection | None = None
        self.problem: BaseException | None = None

    def run(self) -> None:
        try:
            self.conn = self.pool.state.instance.connect()
        except BaseException as exc:  # noqa: BLE001 - said by the pool
            self.problem = exc
        self.pool.ready.release()
        while self.conn is not None:
            self.go.wait()
            self.go.clear()
            if self.pool.closing:
                break
            try:
                self._slice()
            finally:
                self.pool.ready.release()
        if self.conn is not None:
            self.conn.close()

    def _slice(self) -> None:
        names, weights = self.pool.names, self.pool.weights
        while time.perf_counter() < self.deadline:
            step = self.pool.by_name[self.rng.choices(names, weights)[0]]
            if step.name in self.result.errors:
                continue
            self.pool.execute(self, step)


class MixPool:
    """One config's N connections for one VU count of one block."""

    def __init__(self, owner: Any, state: ConfigState, vus: int, seed: str) -> None:
        self.owner, self.state, self.seed = owner, state, seed
        self.steps = [s for s in owner.steps if s.weight > 0]
        self.names = [s.name for s in self.steps]
        self.weights = [s.weight for s in self.steps]
        self.by_name = {s.name: s for s in self.steps}
        self.write_lock = threading.Lock()  # a write and its undo: one connection at a time
        self.ready = threading.Semaphore(0)
        self.closing = False
        self.workers = [_Connection(self, i) for i in range(vus)]
        for w in self.workers:
            w.start()
        self._wait(60.0)
        problem = next((w.problem for w in self.workers if w.problem is not None), None)
        if problem is not None:
            self.close()
            raise RuntimeError(f"a connection of {state.label} could not connect: {redact(str(problem))}")

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for _ in self.workers:
            if not self.ready.acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise RuntimeError(f"a connection of {self.state.label} did not finish its slice in time")

    def run(self, seconds: float) -> SliceResult:
        """Every connection runs the mix for ``seconds``; their combined result."""
        started = time.perf_counter()
        for w in self.workers:
            w.result, w.deadline = SliceResult(), started + seconds
            w.go.set()
        self._wait(seconds + 600.0 + float(self.owner.plan.query_timeout))
        out = SliceResult(seconds=time.perf_counter() - started)
        for w in self.workers:
            for name, values in w.result.latencies.items():
                out.latencies.setdefault(name, []).extend(values)
            for name, text in w.result.errors.items():
                out.errors.setdefault(name, text)
            out.timeouts |= w.result.timeouts
        return out

    def execute(self, worker: _Connection, step: Step) -> None:
        """One statement on ``worker``'s connection (a write with its undo, under the lock)."""
        conn, dialect = worker.conn, self.state.dialect
        assert conn is not None
        family = dialect.family
        statements = self.owner.wd.statements(step.sql, family)
        lock = self.write_lock if step.kind == "write" else None
        if lock is not None:
            lock.acquire()
        try:
            run = self.owner._run(self.state, conn, step, statements)
            if step.kind == "write" and step.undo is not None and self.owner.restore == "undo":
                run_write(conn, dialect, self.owner.wd.statements(step.undo, family))
        except StepTimeout as exc:
            rollback(conn, dialect)
            worker.result.errors.setdefault(step.name, f"{step.name}: {exc}")
            worker.result.timeouts.add(step.name)
            return
        except Exception as exc:  # noqa: BLE001 - recorded per statement; the connection goes on with the others
            rollback(conn, dialect)
            worker.result.errors.setdefault(step.name, f"{step.name}: {type(exc).__name__}: {redact(str(exc))}")
            return
        finally:
            if lock is not None:
                lock.release()
        worker.result.latencies.setdefault(step.name, []).append(run.seconds)

    def close(self) -> None:
        self.closing = True
        for w in self.workers:
            w.go.set()
        for w in self.workers:
            w.join(timeout=30)


class SqlMix(SteppedTrial):
    """One config's mix of one block, slice by slice (steps ``vuN``)."""

    def __init__(self, owner: Any, state: ConfigState, block: int, rec: Recorder) -> None:
        opts = owner.options
        self.owner, self.state, self.block, self.rec, self.opts = owner, state, block, rec, opts
        self.steps = tuple(f"vu{n}" for n in opts.vus)
        self.slice = opts.slice_seconds
        self.rounds = rounds_of(opts)
        self.warmup_rounds = warmup_rounds_for(self.slice, opts.measured_seconds, self.slice)
        self.pool: MixPool | None = None
        self.pool_step = ""
        self.probe = SliceProbe(state.instance)
        self.latencies: dict[str, dict[str, list[float]]] = {}  # vu step -> statement -> latencies
        self.failed: dict[str, set[str]] = {}
        self.result = TrialResult()

    def run_step(self, step: str, repetition: int) -> None:
        if self.pool_step != step:
            self._open(step)
        assert self.pool is not None
        paused = self.probe.start()
        self.state.mark(step)
        try:
            res = self.pool.run(self.slice)
        finally:
            self.state.mark(None)
            cpu, counters = self.probe.stop()
        mine = self.latencies.setdefault(step, {})
        for name, values in res.latencies.items():
            mine.setdefault(name, []).extend(values)
        for name, text in res.errors.items():
            if name not in self.failed.setdefault(step, set()):
                self.failed[step].add(name)
                self.result.failures.append(f"{step} round {repetition + 1}: {text}")
                self.result.timeouts += name in res.timeouts
        round_ = repetition + 1
        self.rec.add(TEST, step, "statements_per_s", res.runs / res.seconds if res.seconds > 0 else 0.0,
                     "statements/s", round=round_)
        record_slice_costs(self.rec, TEST, step, round_, res.runs, cpu, counters, paused, self.probe.foreign_cores)
        if not self.state.instance.alive():
            raise RuntimeError(f"the server of {self.state.label} died during step {step}")

    def _open(self, step: str) -> None:
        self._close()
        self.pool = MixPool(self.owner, self.state, int(step[2:]), f"{self.opts.seed}:{self.block}:{step}")
        self.pool_step = step
        if self.opts.rampup_seconds > 0:
            self.pool.run(self.opts.rampup_seconds)
        self.probe.reset()

    def _close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool, self.pool_step = None, ""

    def finish(self) -> TrialResult:
        """Close the connections, check the data after the undos, record the block's figures per VU count."""
        self._close()
        if self.owner.restore == "undo":
            conn = self.state.instance.connect()
            try:
                self.result.failures += self.owner.check_counts(self.state, conn)
            finally:
                conn.close()
        for step in self.steps:
            means: dict[str, float] = {}
            failed = self.failed.get(step, set())
            for name, values in self.latencies.get(step, {}).items():
                if name in failed or not values:
                    continue
                means[name] = fmean(values)
                self.rec.add(TEST, f"{step}.{name}", "elapsed", means[name], "s")
                self.rec.add(TEST, f"{step}.{name}", "latency_p95", float(np.percentile(values, 95)), "s")
                self.rec.add(TEST, f"{step}.{name}", "runs", len(values), "runs")
            for name in failed:
                self.rec.add(TEST, f"{step}.{name}", "elapsed", float("nan"), "s", status="failed")
            record_totals(self.rec, TEST, f"{step}.", [s for s in self.owner.steps if s.weight > 0], means, failed)
        return self.result

    def abort(self) -> None:
        self._close()


def rounds_of(opts: Any) -> int:
    """Slices per config, block and VU count: ``duration`` seconds of them."""
    return max(1, math.ceil(opts.measured_seconds / opts.slice_seconds - 1e-9))


def mix_facts(opts: Any) -> dict[str, Any]:
    """What the schedule does with the mix, for the manifest's ``schedule``."""
    slice_ = opts.slice_seconds
    return {"vus": list(opts.vus), "slice_s": slice_, "duration_s": opts.measured_seconds,
            "rounds_per_step": rounds_of(opts),
            "warmup_rounds_per_step": warmup_rounds_for(slice_, opts.measured_seconds, slice_),
            "rampup_s": opts.rampup_seconds, "mix": "statements drawn by their [weights], seeded per block and "
            "connection", "pairing_unit": "the block: one mean time per statement per config, block and VU count"}
