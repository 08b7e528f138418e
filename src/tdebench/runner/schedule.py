"""``--schedule query``: inside each block, alternate between the twins step by step.

Every twin's server stays up. For each step of the workload's trial (TPC-H: each query of the power stream), the
step runs once on every config in a fresh random order, ``--repeat R`` rounds, before the next step; work whose
unit stays the block (TPC-H's refresh functions, official metrics and throughput test) runs per config in the
block's own order before and after (:class:`tdebench.api.workload.SteppedTrial`). So the two measurements of a
paired comparison are seconds apart instead of a whole trial apart, and drift cancels better.

The pairing unit for the statistics stays the block: each config records one value per step (the mean of its R
runs) and one total per block, so one pass over the steps is one paired observation of the total. The orders
are drawn from ``random.Random("<seed>:<block>:steps")`` and recorded in the manifest (``schedule.orders``:
per block, one entry per step and round, the configs' positions in the plan joined by "-").

Workloads without stepped trials (or whose options leave nothing to interleave, e.g. TPC-H's throughput test
alone) run the block schedule instead; the manifest says so (``schedule.effective``).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from tdebench.api.events import RunListener
from tdebench.api.plan import Block, RunPlan
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import SteppedTrial, Workload
from tdebench.measure.sampler import ResourceSeries
from tdebench.runner.instruments import Watch
from tdebench.runner.memory import MemoryRegimes
from tdebench.runner.progress import RunProgress


class TrialHost(Protocol):
    """What the schedule needs of the run it serves (the orchestrator): its plan and states, and its trial
    bookkeeping (recorders, resets, instruments, failures)."""

    plan: RunPlan
    manifest: dict[str, Any]
    workload: Workload
    states: dict[str, ConfigState]
    ui: RunListener
    progress: RunProgress
    regimes: MemoryRegimes

    def pending(self, block: Block, replay: bool = True) -> list[ConfigState]: ...
    def trial_recorder(self, state: ConfigState, block: Block) -> Recorder: ...
    def run_trial(self, block: Block, state: ConfigState) -> None: ...
    def prepare_trial(self, state: ConfigState, rec: Recorder) -> None: ...
    def note_in_flight(self, block: Block, labels: list[str]) -> None: ...
    def guarded(self, state: ConfigState, results: dict[str, TrialResult], step: Callable[[], object]) -> bool: ...
    def watch(self, state: ConfigState) -> Watch: ...
    def unwatch(self, block: Block, state: ConfigState, watch: Watch) -> ResourceSeries | None: ...
    def progress_note(self) -> str: ...
    def end_trial(self, block: Block, state: ConfigState, rec: Recorder, result: TrialResult,
                  series: ResourceSeries | None) -> None: ...


def release_unfinished(trials: dict[str, SteppedTrial], active: list[ConfigState],
                       results: dict[str, TrialResult]) -> None:
    """After an interrupt: every trial still running lets go of what it holds on its server (a client, an
    account) while the server is still up; the teardown that follows stops the servers."""
    for state in active:
        if state.label not in results:
            with contextlib.suppress(Exception):  # the interrupt is what is being reported
                trials[state.label].abort()


def skip_met_steps(trials: Mapping[str, SteppedTrial | None], block: Block, entry: dict[str, Any]) -> None:
    """Leave out of every config's trial the steps ``--precision`` no longer needs (``block.skip_steps``), and keep
    them in the schedule's manifest entry (``skipped``: per block); nothing when that would leave no step."""
    if not block.skip_steps or any(t is None or not set(t.steps) - block.skip_steps for t in trials.values()):
        return
    for trial in trials.values():
        assert trial is not None
        trial.skip(block.skip_steps)
    entry.setdefault("skipped", {})[str(block.number)] = sorted(block.skip_steps)


def step_orders(seed: int, block: int, labels: list[str], steps: int, repeat: int) -> list[list[str]]:
    """The config order of every (step, round) of one block, in execution order."""
    rng = random.Random(f"{seed}:{block}:steps")
    out = []
    for _ in range(steps * repeat):
        order = labels[:]
        rng.shuffle(order)
        out.append(order)
    return out


class QuerySchedule:
    """Runs blocks with the twins' steps interleaved, through the orchestrator's trial bookkeeping."""

    def __init__(self, orchestrator: TrialHost) -> None:
        self.orch = orchestrator
        entry = orchestrator.manifest.setdefault("schedule", {})
        entry.update(name="query", repeat=orchestrator.plan.repeat, pairing_unit=(
            "the block: one value per step (mean of its runs) and one total per config and block"),
            order="per step and round, a fresh random order of the configs (random.Random('<seed>:<block>:steps'))")
        entry.setdefault("orders", {})
        self.entry = entry

    def run(self, block: Block) -> bool:
        """Run ``block`` step by step; False (nothing done) when the workload cannot, so the block schedule runs it."""
        orch = self.orch
        pending = orch.pending(block)
        if not pending:
            return True
        recs = {s.label: orch.trial_recorder(s, block) for s in pending}
        trials = {s.label: orch.workload.stepped_trial(s, block.number, recs[s.label], orch.plan.repeat)
                  for s in pending}
        skip_met_steps(trials, block, self.entry)
        if any(t is None or not t.steps for t in trials.values()):
            self.entry["effective"] = "block"
            self.entry["note"] = "the workload (with these options) has no steps to interleave: block schedule"
            self._run_as_blocks(block, pending)
            return True
        self.entry["effective"] = "query"
        self.entry.update(orch.workload.schedule_facts())
        self._interleave(block, pending, recs, {k: v for k, v in trials.items() if v is not None})
        return True

    def _run_as_blocks(self, block: Block, pending: list[ConfigState]) -> None:
        for state in pending:
            self.orch.run_trial(block, state)

    def _interleave(self, block: Block, pending: list[ConfigState], recs: dict[str, Recorder],
                    trials: dict[str, SteppedTrial]) -> None:
        orch = self.orch
        steps = list(trials[pending[0].label].steps)
        first = trials[pending[0].label]
        repeat = first.rounds or orch.plan.repeat
        if block.warmup and first.warmup_rounds:
            repeat = min(repeat, first.warmup_rounds)
        name = orch.regimes.trial_name(block)
        results: dict[str, TrialResult] = {}
        watches: dict[str, Any] = {}
        active: list[ConfigState] = []
        orch.ui.task_started("trial", f"{name}: {len(pending)} configs step by step{orch.progress_note()}",
                             len(steps) * repeat)
        try:  # from the line that says the trial started: an interrupt after it says where it cut the trial
            orch.progress.start()
            orch.note_in_flight(block, [s.label for s in pending])
            for state in pending:  # resets and instruments, then block-unit work, in the block's order
                rec = recs[state.label]
                ok = orch.guarded(state, results, lambda s=state, r=rec: orch.prepare_trial(s, r))
                if ok:
                    watches[state.label] = orch.watch(state)
                    ok = orch.guarded(state, results, trials[state.label].begin)
                if ok:
                    active.append(state)
                else:
                    trials[state.label].abort()
            labels = [s.label for s in pending]
            orders = step_orders(orch.plan.seed, block.number, labels, len(steps), repeat)
            self.entry["orders"][str(block.number)] = [
                "-".join(str(orch.plan.labels.index(label)) for label in order) for order in orders]
            for i, order in enumerate(orders):
                step, rep = steps[i // repeat], i % repeat
                for label in order:
                    state = orch.states[label]
                    if state not in active:
                        continue
                    if not orch.guarded(state, results, lambda t=trials[label], s=step, r=rep: t.run_step(s, r)):
                        trials[label].abort()
                        active.remove(state)
                orch.ui.task_advanced("trial", 1)
            for state in list(active):
                trial = trials[state.label]
                orch.guarded(state, results, lambda t=trial, lb=state.label: results.__setitem__(lb, t.finish()))
        finally:
            release_unfinished(trials, active, results)
            orch.progress.finish(len(pending), warmup=block.warmup)
            orch.ui.task_finished("trial")
            series = {label: orch.unwatch(block, orch.states[label], watch) for label, watch in watches.items()}
        for state in pending:
            result = results.get(state.label, TrialResult(failures=["the trial did not finish"]))
            orch.end_trial(block, state, recs[state.label], result, series.get(state.label))
