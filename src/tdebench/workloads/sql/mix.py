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

from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.encryption import redact
from tdebench.workloads.slicing import PooledSlices, SliceProbe, record_slice_costs, warmup_rounds_for
from tdebench.workloads.sql.gated import GatedPool, GatedThread
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


class _Connection(GatedThread):
    """One connection running the mix slice after slice."""

    def __init__(self, pool: "MixPool", index: int) -> None:
        super().__init__(pool, f"tdebench-sql-vu{index + 1}")
        self.mix = pool
        self.rng = random.Random(f"{pool.seed}:{index}")
        self.deadline = 0.0
        self.result = SliceResult()

    def work(self) -> None:
        names, weights = self.mix.names, self.mix.weights
        while time.perf_counter() < self.deadline:
            step = self.mix.by_name[self.rng.choices(names, weights)[0]]
            if step.name not in self.result.errors:
                self.mix.execute(self, step)


class MixPool(GatedPool):
    """One config's N connections for one VU count of one block."""

    def __init__(self, owner: Any, state: ConfigState, vus: int, seed: str) -> None:
        super().__init__(state)
        self.owner, self.seed = owner, seed
        self.steps = [s for s in owner.steps if s.weight > 0]
        self.names = [s.name for s in self.steps]
        self.weights = [s.weight for s in self.steps]
        self.by_name = {s.name: s for s in self.steps}
        self.write_lock = threading.Lock()  # a write and its undo: one connection at a time
        self.connections = [_Connection(self, i) for i in range(vus)]
        self.start(list(self.connections), "a connection")

    def run(self, seconds: float) -> SliceResult:
        """Every connection runs the mix for ``seconds``; their combined result."""
        started = time.perf_counter()
        for c in self.connections:
            c.result, c.deadline = SliceResult(), started + seconds
        self.release()
        self.wait(seconds + 600.0 + float(self.owner.plan.query_timeout),
                  f"a connection of {self.state.label} did not finish its slice in time")
        out = SliceResult(seconds=time.perf_counter() - started)
        for c in self.connections:
            for name, values in c.result.latencies.items():
                out.latencies.setdefault(name, []).extend(values)
            for name, text in c.result.errors.items():
                out.errors.setdefault(name, text)
            out.timeouts |= c.result.timeouts
        return out

    def execute(self, worker: _Connection, step: Step) -> None:
        """One statement on ``worker``'s connection (a write with its undo, under the lock)."""
        conn, dialect = worker.conn, self.state.dialect
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


class SqlMix(PooledSlices):
    """One config's mix of one block, slice by slice (steps ``vuN``)."""

    def __init__(self, owner: Any, state: ConfigState, block: int, rec: Recorder) -> None:
        opts = owner.options
        self.owner, self.state, self.block, self.rec, self.opts = owner, state, block, rec, opts
        self.steps = tuple(f"vu{n}" for n in opts.vus)
        self.slice = opts.slice_seconds
        self.rounds = rounds_of(opts)
        self.warmup_rounds = warmup_rounds_for(self.slice, opts.measured_seconds, self.slice)
        self.probe = SliceProbe(state.instance)
        self.latencies: dict[str, dict[str, list[float]]] = {}  # vu step -> statement -> latencies
        self.failed: dict[str, set[str]] = {}
        self.result = TrialResult()

    def run_step(self, step: str, repetition: int) -> None:
        pool = self.pool_for(step)
        res, paused, cpu, counters = self.probe.around(self.state, step, lambda: pool.run(self.slice))
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

    def open_pool(self, step: str) -> MixPool:
        pool = MixPool(self.owner, self.state, int(step[2:]), f"{self.opts.seed}:{self.block}:{step}")
        if self.opts.rampup_seconds > 0:
            pool.run(self.opts.rampup_seconds)
        return pool

    def finish(self) -> TrialResult:
        """Close the connections, check the data after the undos, record the block's figures per VU count."""
        self.close_pool()
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
