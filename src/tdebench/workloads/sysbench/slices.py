"""The interleaved schedule of sysbench: measured slices of ``slice`` seconds alternate between the configs.

Per block and step (one sysbench test at one thread count): each config starts one connected sysbench process
(:class:`tdebench.workloads.sysbench.gated.GatedSysbench`), runs one ramp-up (``rampup`` seconds, not measured),
then ``rounds`` rounds, each opening every config's gate for one slice in the round's order
(:class:`tdebench.runner.schedule.QuerySchedule` draws it). The threads stay connected between slices, so a slice
costs no process start, and its p50/p95/p99 are computed from the latencies of the transactions that started and
ended inside it. Every slice records tps, qps, latency percentiles and the server's CPU and counters per
transaction with its ``round``: one round is one paired observation. Twins get the same random seed per block.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from typing import Any

from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import SteppedTrial
from tdebench.workloads.slicing import (DEFAULT_SLICES, SliceProbe, record_slice_costs, rounds_for, slice_seconds,
                                       warmup_rounds_for)
from tdebench.workloads.sysbench.accounts import sysbench_account
from tdebench.workloads.sysbench.gated import GatedSysbench
from tdebench.workloads.sysbench.options import SysbenchOptions


def split_step(step: str) -> tuple[str, int]:
    """``oltp_read_write.vu4`` -> (``oltp_read_write``, 4)."""
    test, _, threads = step.rpartition(".vu")
    return test, int(threads)


class SlicedSysbenchTrial(SteppedTrial):
    """One config's sysbench trial of one block, run slice by slice (steps ``<test>.vuN``, ``rounds`` runs each)."""

    def __init__(self, state: ConfigState, block: int, rec: Recorder, opts: SysbenchOptions, owner: Any) -> None:
        self.state, self.block, self.rec, self.opts, self.owner = state, block, rec, opts, owner
        self.steps = tuple(f"{test}.vu{n}" for test in opts.tests for n in opts.vus)
        default = DEFAULT_SLICES["sysbench"]
        self.rounds = rounds_for(opts.slice, opts.duration, default)
        self.warmup_rounds = warmup_rounds_for(opts.slice, opts.duration, default)
        self.slice = slice_seconds(opts.slice, opts.duration, default)
        self.client: GatedSysbench | None = None
        self.result = TrialResult()
        self.probe = SliceProbe(state.instance)
        self.current = ""
        self._account_cm: AbstractContextManager[Any] | None = None
        self.account: Any = None

    def begin(self) -> None:
        """A sysbench account on the instance for the whole block."""
        self._account_cm = sysbench_account(self.state.instance, self.state.dialect.protocol,
                                            self.opts.spread == "all")
        self.account = self._account_cm.__enter__()

    def _seed(self, threads: int) -> int:
        return self.opts.seed + self.block * 1000 + threads * 37 if self.opts.seed else 0

    def _client_for(self, step: str) -> GatedSysbench:
        """The step's connected sysbench process, started (and ramped up) at its first slice."""
        if step != self.current or self.client is None:
            self._stop_client()
            test, threads = split_step(step)
            self.current = step
            self.client = GatedSysbench(self.account, self.opts, test, threads, self._seed(threads),
                                        self.state.instance.workdir).__enter__()
            if self.opts.rampup > 0:
                opened = self.client.open_slice()
                time.sleep(self.opts.rampup)
                self.client.close_slice(opened)
            self.probe.reset()
        return self.client

    def ready(self, step: str) -> None:
        """Start the step's sysbench process and ramp it up (unless done)."""
        self._client_for(step)

    def run_step(self, step: str, repetition: int) -> None:
        """One slice of ``step`` (the first of a step is preceded by its ramp-up)."""
        test, threads = split_step(step)
        client = self._client_for(step)
        round = repetition + 1
        paused = self.probe.start()
        self.state.mark(step)
        try:
            opened = client.open_slice()
            time.sleep(self.slice)
            outcome = client.close_slice(opened)
        finally:
            self.state.mark(None)
            cpu, counters = self.probe.stop()
        report = outcome.report(test)
        if not report.transactions:
            self.result.failures.append(f"{step} round {round}: no transaction ended inside the slice")
            return
        self.owner.record_slice(self, test, threads, round, report, outcome.seconds)
        record_slice_costs(self.rec, test, f"vu{threads}", round, report.transactions, cpu, counters, paused,
                           self.probe.foreign_cores)
        if not self.state.instance.alive():
            raise RuntimeError(f"the server of {self.state.label} died during {step}")

    def finish(self) -> TrialResult:
        self._release()
        return self.result

    def abort(self) -> None:
        self._release()

    def _stop_client(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            client.stop()

    def _release(self) -> None:
        self._stop_client()
        if self._account_cm is not None:
            cm, self._account_cm = self._account_cm, None
            cm.__exit__(None, None, None)
