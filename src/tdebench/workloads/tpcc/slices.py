"""The interleaved schedule of TPC-C: every twin keeps its virtual users connected, and measured slices of
``slice`` seconds alternate between the configs, in a fresh random order every round.

One block, per VU step: each config's virtual users are forked and connected once and run one ramp-up (the other
configs' users wait, connected and idle); then ``rounds`` rounds, each running one slice on every config in the
round's order (:class:`tdebench.runner.schedule.QuerySchedule` draws it). Only one config's users run at a time,
so two twins never measure each other, and two arms of a pair are measured seconds apart. Every slice records its
own TPM, NOPM, latency percentiles per transaction kind and server CPU per transaction with its ``round``: one round
is one paired observation. The consistency conditions are checked after the block, as after a whole trial.

A virtual user keeps its deck and random inputs from slice to slice, so a config's slices draw the same sequence
of transactions as one long step would, and twins (same seed) draw the same one.
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import wait
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.engines.toolkit.process import own_processes
from tdebench.workloads.tpcc.driver import CONNECT_TIMEOUT, StepResult, reap, vu_configs
from tdebench.workloads.tpcc.options import TpccOptions
from tdebench.workloads.tpcc.procs import resolve_mode
from tdebench.workloads.slicing import (DEFAULT_SLICES, PooledSlices, SliceProbe, record_slice_costs, rounds_for,
                                        slice_seconds, warmup_rounds_for)
from tdebench.workloads.tpcc.vu import vu_serve

class VuPool:
    """One config's virtual users for one VU step: forked and connected once, then told to run window after
    window; the other configs' users wait meanwhile."""

    def __init__(self, instance: Instance, dialect: Dialect, opts: TpccOptions, vus: int, seed: int) -> None:
        self.opts = opts
        self.vus = vus
        ctx = multiprocessing.get_context("fork")
        self.abort = ctx.Event()
        self.procs: list[Any] = []
        self.pipes: dict[Any, int] = {}
        procedures = resolve_mode(opts.mode, dialect) == "procedures"
        try:
            for cfg in vu_configs(opts, vus, seed, procedures, instance.client_nodes()):
                parent, child = ctx.Pipe(duplex=True)
                proc = ctx.Process(target=vu_serve, args=(instance, dialect, cfg, child, self.abort),
                                   name=f"tdebench-tpcc-vu{cfg.index + 1}", daemon=True)
                proc.start()
                child.close()
                self.procs.append(proc)
                self.pipes[parent] = cfg.index
            own_processes(p.pid for p in self.procs)  # they leave by themselves if tdebench is killed
            self._await("ready", CONNECT_TIMEOUT)
        except BaseException:
            self.close()
            raise

    def _await(self, want: str, timeout: float) -> dict[int, Any]:
        """One message from every user; RuntimeError naming the first that failed, died or did not answer."""
        out: dict[int, Any] = {}
        waiting = dict(self.pipes)
        deadline = time.monotonic() + timeout
        while waiting and time.monotonic() < deadline:
            for conn in wait(list(waiting), timeout=max(0.0, deadline - time.monotonic())):
                index = waiting.pop(conn)
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):
                    kind, payload = "fatal", "exited without a result"
                if kind != want:
                    raise RuntimeError(f"virtual user {index + 1}: {payload}")
                out[index] = payload
        if waiting:
            raise RuntimeError(f"{len(waiting)} virtual user(s) did not answer within {timeout:.0f} s")
        return out

    def run(self, seconds: float, measured: bool = True) -> StepResult:
        """Every user runs transactions for ``seconds``; their combined result (counted only if ``measured``)."""
        for conn in self.pipes:
            conn.send(("run", seconds, measured))
        result = StepResult(self.vus, seconds)
        for index, res in sorted(self._await("done", seconds + self.opts.stop_grace).items()):
            result.add(res)
        return result

    def close(self) -> None:
        """Stop every user: a polite word, then terminate and kill the ones that do not go."""
        for conn in self.pipes:
            try:
                conn.send(("stop",))
            except OSError:
                pass
        self.abort.set()
        reap(self.procs)
        for conn in self.pipes:
            conn.close()
        self.procs, self.pipes = [], {}


class SlicedTpccTrial(PooledSlices):
    """One config's TPC-C trial of one block, run slice by slice (steps ``vuN``, ``rounds`` runs each)."""

    def __init__(self, state: ConfigState, block: int, rec: Recorder, opts: TpccOptions, owner: Any) -> None:
        self.state, self.block, self.rec, self.opts, self.owner = state, block, rec, opts, owner
        self.steps = tuple(f"vu{n}" for n in opts.vus)
        self.rounds = rounds_for(opts.slice, opts.duration, DEFAULT_SLICES["tpcc"])
        self.warmup_rounds = warmup_rounds_for(opts.slice, opts.duration, DEFAULT_SLICES["tpcc"])
        self.slice = slice_seconds(opts.slice, opts.duration, DEFAULT_SLICES["tpcc"])
        self.result = TrialResult()
        self.probe = SliceProbe(state.instance)

    def run_step(self, step: str, repetition: int) -> None:
        """One slice of ``step`` (the first of a step forks and connects its users and ramps up)."""
        pool = self.pool_for(step)
        result, paused, cpu, counters = self.probe.around(self.state, step, lambda: pool.run(self.slice))
        self.owner.record_slice(self, step, repetition + 1, result)
        record_slice_costs(self.rec, "tpcc", step, repetition + 1, result.committed, cpu, counters, paused,
                           self.probe.foreign_cores)
        if not self.state.instance.alive():
            raise RuntimeError(f"the server of {self.state.label} died during step {step}")

    def open_pool(self, step: str) -> VuPool:
        vus = int(step[2:])
        pool = VuPool(self.state.instance, self.state.dialect, self.opts, vus, self.opts.seed + 7919 * self.block + vus)
        if self.opts.rampup > 0:
            pool.run(self.opts.rampup, measured=False)
        return pool

    def finish(self) -> TrialResult:
        """Stop the users, then check the consistency conditions of the data the block left."""
        self.close_pool()
        self.owner.finish_sliced(self)
        return self.result
