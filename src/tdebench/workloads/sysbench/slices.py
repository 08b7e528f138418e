"""The interleaved schedule of sysbench: measured slices of ``slice`` seconds alternate between the configs.

Per block and step (one sysbench test at one thread count): each config runs one ramp-up (``rampup`` seconds of
the same test, not measured), then ``rounds`` rounds, each running one ``sysbench run --time=<slice>`` on every
config in the round's order (:class:`tdebench.runner.schedule.QuerySchedule` draws it). One sysbench run per slice
gives the slice its own histogram, so its p50/p95/p99 are the slice's; its connections are opened before its
clock starts. Every slice records tps, qps, latency percentiles and the server's CPU and counters per
transaction with its ``round``: one round is one paired observation. Twins get the same random seed per round.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import SteppedTrial
from tdebench.workloads.slicing import SliceProbe, record_slice_costs, rounds_for, slice_seconds, warmup_rounds_for
from tdebench.workloads.sysbench import runner
from tdebench.workloads.sysbench.accounts import sysbench_account
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
        self.rounds = rounds_for(opts.slice, opts.duration)
        self.warmup_rounds = warmup_rounds_for(opts.slice, opts.duration)
        self.slice_opts = opts.model_copy(update={"duration": slice_seconds(opts.slice, opts.duration), "rampup": 0})
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

    def _seed(self, threads: int, round: int) -> int:
        return self.opts.seed + self.block * 1000 + threads * 37 + round if self.opts.seed else 0

    def run_step(self, step: str, repetition: int) -> None:
        """One slice of ``step`` (the first of a step is preceded by its ramp-up)."""
        test, threads = split_step(step)
        if step != self.current:
            self.current = step
            if self.opts.rampup > 0:
                ramp = self.opts.model_copy(update={"duration": self.opts.rampup, "rampup": 0})
                runner.run(self.account, ramp, test, threads, self._seed(threads, 0))
            self.probe.reset()
        round = repetition + 1
        paused = self.probe.start()
        self.state.mark(step)
        try:
            outcome = runner.run(self.account, self.slice_opts, test, threads, self._seed(threads, round))
        finally:
            self.state.mark(None)
            cpu, counters = self.probe.stop()
        if outcome.code != 0 or not outcome.report.complete:
            self.result.failures.append(f"{step} round {round}: {outcome.error()}")
            return
        self.owner.record_slice(self, test, threads, round, outcome.report)
        record_slice_costs(self.rec, test, f"vu{threads}", round, outcome.report.transactions, cpu, counters, paused,
                           self.probe.foreign_cores)
        if not self.state.instance.alive():
            raise RuntimeError(f"the server of {self.state.label} died during {step}")

    def finish(self) -> TrialResult:
        self._release()
        return self.result

    def abort(self) -> None:
        self._release()

    def _release(self) -> None:
        if self._account_cm is not None:
            cm, self._account_cm = self._account_cm, None
            cm.__exit__(None, None, None)
