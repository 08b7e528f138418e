"""``--schedule duet``: the two twins run the same step at the same moment, each in a cgroup of its own.

Inside every block, the two configs' trials run step by step as with ``--schedule query`` (the workload's
:class:`~tdebench.api.workload.SteppedTrial`: TPC-H's queries, TPC-C's and sysbench's slices), but instead of one
after the other, both twins run each step together: one client thread per twin, released by one barrier
(:mod:`tdebench.runner.pairing`). One simultaneous pair is one paired observation: whatever the host does during
it (another tenant, the disk's latency, a CPU's frequency) hits both twins alike.

Each twin lives in a cgroup of its own (:mod:`tdebench.runner.cgroups`): its server processes, its client thread
(and what that starts: TPC-C's virtual users, sysbench), and for an embedded engine the processes that run its
statements (:mod:`tdebench.runner.hosted`: two twins in tdebench's own process would share its interpreter lock).
Each group has its own CPU set (the CPUs split in two) and the same I/O weight; the CPU sets alternate between the
twins from pair to pair, from a random side per block, and are swapped every fraction of a second inside a pair
(:class:`~tdebench.runner.pairing.CpuSwapper`), so that no twin keeps the faster core. Every pair records
what each twin waited on (rows ``duet/<step>/<metric>``) and the manifest keeps the schedule (``schedule.pairs``:
per block and pair, what ran, the CPU sets of the configs in plan order, and the barrier's skew).

``--schedule turns`` is the duet with the twins taking turns on the machine (:mod:`tdebench.runner.turns`): both
twins' groups have every CPU, and while a pair runs one twin's server is frozen and the other's runs, swapped every
fraction of a second; each twin's client times its step with a clock that stands still while its server is held.

RF1, RF2 and the rest of a trial's block-unit work (``begin``, ``finish``) run as pairs too; a step's clients are
started and ramped up before its first pair, one twin after the other (``SteppedTrial.ready``). The pairing unit of the statistics is
unchanged: TPC-H records one value per query and block, OLTP one per round, counted per block.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from tdebench.api import clock
from tdebench.api.engine import Engine
from tdebench.api.plan import Block, RunPlan
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import SteppedTrial
from tdebench.engines import get_engine
from tdebench.errors import EnvironmentProblem, UsageError
from tdebench.runner import cgroups, pairing, turns
from tdebench.runner.freezer import Freezer, freezer_base
from tdebench.runner.hosted import HostedInstance
from tdebench.runner.pairing import Arm, CpuSwapper, TwinWorker, cpu_slots, run_pair, skew_us, slot_orders
from tdebench.runner.schedule import TrialHost, release_unfinished, skip_met_steps

TWINS = 2
#: what each twin waited on and used in a pair, and the unit of its row (``duet/<step>/<metric>``)
WAITS = {"cpu_wait": "s", "io_wait": "s", "cgroup_cpu": "s", "throttled": "s", "read_bytes": "bytes",
         "write_bytes": "bytes", "read_ios": "count"}
PAIRING = ("the simultaneous pair: both twins run the same step at the same moment; intervals count blocks (TPC-H: "
           "one value per query and block and their total; OLTP: each block's geometric mean over its rounds)")


class Owner(Protocol):
    """The run's ownership record (cgroups made for the run, removed by ``tdebench cleanup`` after a kill)."""

    def add_cgroup(self, path: Path) -> None: ...


class DuetHost(TrialHost, Protocol):
    """The orchestrator, as the duet schedule uses it."""

    ownership: Owner


def check_plan(plan: RunPlan) -> None:
    """Before any work: UsageError (exit 2) for what the duet cannot serve, EnvironmentProblem (exit 3) when this
    machine cannot make the twins' cgroups."""
    from tdebench.workloads import check_workload_options

    if plan.schedule not in ("duet", "turns"):
        return
    name = f"--schedule {plan.schedule}"
    if len(plan.configs) != TWINS:
        raise UsageError(f"{name} runs exactly two configs side by side, not {len(plan.configs)} "
                         f"({', '.join(plan.labels)})", "compare two specs, e.g. --encryption none,none (A/A) or "
                         "none,tde:aes-256-ctr, or use --schedule query for more")
    if plan.pin and plan.schedule == "duet":  # taking turns, both twins' servers may share the server CPUs
        raise UsageError(f"--pin puts the servers on fixed CPUs, and {name} places each twin's server itself",
                         "leave --pin out, or use --schedule turns")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < TWINS and plan.schedule == "duet":
        raise UsageError(f"--schedule duet gives each of the two twins CPUs of its own, and this process may run on "
                         f"{len(cpus)} CPU ({','.join(map(str, cpus))})", "run it with at least 2 CPUs (e.g. "
                         "taskset -c 0,1 tdebench run ...), or use --schedule query")
    options = check_workload_options(plan.workload, plan.workload_options)
    refusal = options.why_no_steps() or (options.why_no_turns() if plan.schedule == "turns" else None)
    if refusal is not None:
        raise UsageError(f"{name} runs the twins step by step: {refusal[0]}", refusal[1])
    for config in plan.configs:
        _check_engine(name, config.label, get_engine(config.engine), plan.schedule == "turns")
    reason = cgroups.unavailable()
    if reason:
        raise EnvironmentProblem(f"{name} needs a cgroup per twin (CPU set, I/O weight): {reason}",
                                 "run as root on a machine with cgroup v1 (cpuset, cpuacct, blkio) or v2, or use "
                                 "--schedule query", ["cgroup v1", "cgroup v2"])
    if plan.schedule == "turns" and freezer_base() is None:
        raise EnvironmentProblem("--schedule turns freezes each twin's server in turn, and this machine has no "
                                 "cgroup freezer (a v1 freezer hierarchy or cgroup v2)", "use --schedule duet or "
                                 "query", ["cgroup freezer"])


def _check_engine(name: str, label: str, engine: Engine, turns: bool) -> None:
    """UsageError when the schedule cannot place (or, for turns, hold) this engine's twin."""
    if engine.remote:
        raise UsageError(f"{name} puts each twin's server processes in a cgroup of their own, and "
                         f"'{label}' is a server tdebench does not run", "use --schedule query")
    if engine.dialect.protocol == "embedded" and (turns or not engine.dialect.multi_process):
        why = ("holds a twin's server still by freezing its processes, and an embedded engine's statements run in "
               "tdebench's own process" if turns else "runs an embedded engine's statements in processes of "
               f"their own, and {engine.dialect.product} opens its database from one process only")
        also = " or duet" if turns and engine.dialect.multi_process else ""
        raise UsageError(f"{name} {why}", f"use --schedule query{also}")


class DuetSchedule:
    """Runs blocks with the two twins' steps side by side, through the orchestrator's trial bookkeeping."""

    def __init__(self, orchestrator: DuetHost) -> None:
        self.orch = orchestrator
        plan = orchestrator.plan
        check_plan(plan)  # again for a resumed run (a fresh run was checked before its run directory existed)
        self.turns = plan.schedule == "turns"
        every = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
        self.slots = [every] * TWINS if self.turns else cpu_slots(os.sched_getaffinity(0), TWINS)
        self.swap_seconds = 0.0 if self.turns else pairing.SWAP_SECONDS
        self.swap_writes: list[float] = []
        self.groups: dict[str, cgroups.TwinGroup] = {}
        self.freezers: dict[str, Freezer] = {}
        self.held = turns.HeldTime()
        self.devices: dict[str, str | None] = {}
        entry = orchestrator.manifest.setdefault("schedule", {})
        entry.update(name=plan.schedule, repeat=plan.repeat, pairing_unit=PAIRING, cpu_slots=self.slots,
                     swap_seconds=self.swap_seconds,
                     pairs_note="per block, one entry per pair: [what ran, the CPU sets of the configs in plan order "
                                "(|) when it began, microseconds between the twins' releases, how often the sets "
                                "were swapped while it ran (every swap_seconds)]",
                     waits_note=_waits_note())
        if self.turns:
            entry.update(turn_seconds=turns.TURN_SECONDS, turns_note="each twin's server frozen while the other's "
                         "runs, swapped every turn_seconds; a twin's step time stops while its server is held",
                         pairs_note="per block, one entry per pair: [what ran, the CPU sets of the configs in plan "
                         "order (|), microseconds between the twins' releases, how often the running twin changed "
                         "while it ran (every turn_seconds)]")
        entry.setdefault("pairs", {})
        self.entry = entry

    # groups ---------------------------------------------------------------------------------------------------
    def _groups(self) -> dict[str, cgroups.TwinGroup]:
        """The twins' groups, made at the first block (recorded for ``tdebench cleanup`` before they exist)."""
        if self.groups:
            return self.groups
        hier = cgroups.locate()
        facts: dict[str, Any] = {"version": hier.version if hier else "?", "groups": {}}
        for index, label in enumerate(self.orch.plan.labels):
            group = cgroups.TwinGroup(f"{cgroups.PREFIX}{os.getpid()}-duet-{index}", hier)
            for path in group.paths:
                self.orch.ownership.add_cgroup(path)
            group.create()
            self.groups[label] = group
            if self.turns:
                freezer = Freezer.for_twin(group.name, group)
                for path in freezer.owned:
                    self.orch.ownership.add_cgroup(path)
                freezer.create()
                self.freezers[label] = freezer
            facts["groups"][label] = [str(p) for p in group.paths]
            state = self.orch.states[label]
            self.devices[label] = cgroups.device_of(state.instance.data_dir) if state.instance.scannable else None
            facts.setdefault("io", {})[label] = cgroups.io_weight_facts(self.devices[label], group.hier.version)
        facts["clients"] = ("each twin's client thread and what it starts are in its group" if facts["version"] == "1"
                            else "cgroup v2 holds processes only: the client threads (and TPC-C's virtual users or "
                                 "sysbench) stay in tdebench's group; servers and statement hosts are the twin's")
        self.entry["cgroups"] = facts
        return self.groups

    def close(self) -> None:
        """At the end of the run: what is left in the groups goes back to tdebench's group, the groups go."""
        for freezer in self.freezers.values():
            freezer.close()
        failed = [str(f.path) for f in self.freezers.values() if f.owned and not cgroups.remove_group(f.path)]
        failed += [path for group in self.groups.values() for path in group.release()]
        self.groups, self.freezers = {}, {}
        if failed:
            self.orch.ui.message(f"could not remove cgroup(s) {', '.join(failed)}; `tdebench cleanup` will")

    def _place(self, state: ConfigState) -> None:
        """The twin's server processes into its group (they are restarted outside it between blocks); an embedded
        twin's hosts join it when they start."""
        if state.engine.dialect.protocol != "embedded" and state.instance.scannable:
            group, pids = self.groups[state.label], state.instance.server_pids()
            elsewhere = group.held_elsewhere(pids)
            if elsewhere:
                raise EnvironmentProblem(f"--schedule duet cannot give {state.label} a cgroup of its own: cgroup v2 "
                                         f"holds its server in {elsewhere}, the memory cgroup that bounds its page "
                                         "cache", "use a machine with cgroup v1, --page-source memory, or "
                                         "--schedule query")
            group.adopt(pids)
            if state.label in self.freezers:
                self.freezers[state.label].adopt(pids)

    def _host(self, state: ConfigState) -> None:
        """An embedded twin's statements go to host processes of its own for the block."""
        if state.engine.dialect.protocol != "embedded":
            return
        group = self.groups[state.label]
        mine = os.getpid()
        state.instance = HostedInstance(state.instance, group.add_process,  # type: ignore[assignment]
                                        lambda: [p for p in group.processes() if p != mine])

    @staticmethod
    def unhost(state: ConfigState, wait: bool = True) -> None:
        """The real instance back (after the block's instruments stopped; before its records and restarts);
        ``wait`` False (an interrupt): its statement hosts are killed, not asked to leave."""
        hosted = state.instance
        if isinstance(hosted, HostedInstance):
            hosted.close(wait)
            state.instance = hosted.real

    # blocks ---------------------------------------------------------------------------------------------------
    def run(self, block: Block) -> bool:
        """Run ``block`` with both twins side by side (a lone config left, e.g. its twin abandoned: whole trial)."""
        orch = self.orch
        pending = orch.pending(block)
        if len(pending) != TWINS:
            if pending:
                self.entry.setdefault("notes", []).append(
                    f"block {block.number}: {len(pending)} config left to run, as a whole trial")
            for state in pending:
                orch.run_trial(block, state)
            return True
        try:
            groups = self._groups()
        except OSError as exc:
            raise EnvironmentProblem(f"cannot make the twins' cgroups for --schedule duet: {exc.strerror or exc}",
                                     "run as root, or use --schedule query") from exc
        recs = {s.label: orch.trial_recorder(s, block) for s in pending}
        try:
            for state in pending:
                self._host(state)
            trials = {s.label: orch.workload.stepped_trial(s, block.number, recs[s.label], orch.plan.repeat)
                      for s in pending}
            skip_met_steps(trials, block, self.entry)
            if any(t is None or not t.steps for t in trials.values()):  # refused before any work: not expected
                raise UsageError(f"--workload {orch.plan.workload} gave no steps for --schedule duet",
                                 "use --schedule query")
            self.entry.update(orch.workload.schedule_facts())
            _BlockRun(self, block, pending, recs, {k: v for k, v in trials.items() if v is not None}, groups).run()
        finally:
            for state in pending:
                self.unhost(state, wait=False)  # only left installed when the block ended with an error
        return True

    def record_pair(self, block: Block, what: str, cpus: str, skew: float | None, swapper: pairing.Rotation) -> None:
        self.entry["pairs"].setdefault(str(block.number), []).append(
            [what, cpus, None if skew is None else round(skew, 1), swapper.count])
        self.swap_writes.extend(swapper.timings)
        if isinstance(swapper, turns.Turns):
            if swapper.failed:
                raise EnvironmentProblem(f"--schedule turns could not hold a twin's server still ({swapper.failed})",
                                         "use --schedule duet or query", ["cgroup freezer"])
            return
        if swapper.failed and "swap_failed" not in self.entry:
            self.entry["swap_failed"] = swapper.failed
            self.orch.ui.message(f"--schedule duet could not swap the twins' CPU sets inside a pair "
                                 f"({swapper.failed}): they swap between pairs only from now on")
            self.swap_seconds = 0.0

    def summarize_skew(self) -> None:
        """The skew of every measured pair so far (not the ready, begin and finish pairs)."""
        skews = sorted(p[2] for pairs in self.entry["pairs"].values() for p in pairs
                       if p[2] is not None and p[0].split(":")[0] not in ("ready", "begin", "finish"))
        if skews:
            self.entry["skew_us"] = {"pairs": len(skews), "median": round(statistics.median(skews), 1),
                                     "p95": round(skews[min(len(skews) - 1, int(0.95 * len(skews)))], 1),
                                     "max": round(skews[-1], 1)}
        if self.swap_writes:
            writes = sorted(self.swap_writes)
            self.entry["holds" if self.turns else "swaps"] = {
                "count": len(writes), "median_write_us": round(statistics.median(writes) * 1e6, 1),
                "max_write_us": round(writes[-1] * 1e6, 1)}


def _waits_note() -> str:
    io = ("io_wait: time its tasks waited for block I/O (delay accounting)" if cgroups.delay_accounting() else
          "io_wait: not recorded, the kernel's delay accounting is off (sysctl kernel.task_delayacct=1 turns it on)")
    return ("rows duet/<step>/<metric> per twin: cpu_wait (time its tasks waited for a CPU, schedstat), " + io
            + ", cgroup_cpu (CPU time of its group), throttled (CPU throttling of its group), read_bytes, "
              "write_bytes, read_ios (its group's requests to the device of its data)")


def _raise(exc: BaseException) -> None:
    raise exc


class _BlockRun:
    """One block of the duet: prepare and watch both trials, then pairs (begin, per step its clients started and its
    rounds, finish), then the orchestrator's records."""

    def __init__(self, schedule: DuetSchedule, block: Block, pending: list[ConfigState], recs: dict[str, Recorder],
                 trials: dict[str, SteppedTrial], groups: dict[str, cgroups.TwinGroup]) -> None:
        self.sched, self.orch, self.block = schedule, schedule.orch, block
        self.pending, self.recs, self.trials, self.groups = pending, recs, trials, groups
        first = trials[pending[0].label]
        self.steps = list(first.steps)
        self.repeat = first.rounds or self.orch.plan.repeat
        if block.warmup and first.warmup_rounds:
            self.repeat = min(self.repeat, first.warmup_rounds)
        self.by_round = first.rounds is not None
        self.results: dict[str, TrialResult] = {}
        self.active: list[ConfigState] = []
        self.workers: dict[str, TwinWorker] = {}
        pairs = 2 + len(self.steps) * (self.repeat + TWINS)  # begin, per step a ready per twin and its runs, finish
        self.orders = slot_orders(self.orch.plan.seed, block.number, pairs, TWINS)
        self.index = 0
        schedule.entry["pairs"][str(block.number)] = []  # a block redone on resume starts its list afresh
        self.waits: dict[str, dict[tuple[str, int], dict[str, float]]] = {s.label: {} for s in pending}

    def run(self) -> None:
        orch, pending = self.orch, self.pending
        name = orch.regimes.trial_name(self.block)
        watches: dict[str, Any] = {}
        orch.ui.task_started("trial", f"{name}: {len(pending)} configs side by side{orch.progress_note()}",
                             len(self.steps) * self.repeat)
        done = False
        try:
            orch.progress.start()
            orch.note_in_flight(self.block, [s.label for s in pending])
            for state in pending:  # resets and instruments, in the block's order
                rec = self.recs[state.label]
                if orch.guarded(state, self.results, lambda s=state, r=rec: orch.prepare_trial(s, r)):
                    watches[state.label] = orch.watch(state)
                    self.active.append(state)
                    self.sched._place(state)
                else:
                    self.trials[state.label].abort()
            self._pairs()
            done = True
        finally:  # after an interrupt nothing waits for a client thread or a statement host still busy
            for worker in self.workers.values():
                worker.close(5.0 if done else 0.0)
            if not done:
                release_unfinished(self.trials, self.active, self.results)
            orch.progress.finish(len(pending))
            orch.ui.task_finished("trial")
            series = {label: orch.unwatch(self.block, orch.states[label], watch) for label, watch in watches.items()}
            for state in pending:
                self.sched.unhost(state, wait=done)
        self.sched.summarize_skew()
        for state in pending:
            result = self.results.get(state.label, TrialResult(failures=["the trial did not finish"]))
            self._record_waits(state.label, result)
            orch.end_trial(self.block, state, self.recs[state.label], result, series.get(state.label))

    def _pairs(self) -> None:
        self.workers = {s.label: TwinWorker(s.label, self._attach(s.label)) for s in self.active}
        self._pair("begin", lambda t: t.begin)
        starts = any(type(t).ready is not SteppedTrial.ready for t in self.trials.values())
        for step in self.steps:
            if starts:
                self._ready(step)
            for rep in range(self.repeat):
                what = step if self.repeat == 1 and not self.by_round else f"{step}#{rep + 1}"
                arms = self._pair(what, lambda t, s=step, r=rep: (lambda: t.run_step(s, r)))
                for label, arm in arms.items():
                    if arm.error is None:
                        self.waits[label][(step, rep)] = arm.used
                self.orch.ui.task_advanced("trial", 1)
        self._pair("finish", lambda t: (lambda: self.results.__setitem__(self._label_of(t), t.finish())))

    def _attach(self, label: str) -> Callable[[int], Any]:
        """What a twin's client thread does first: join the twin's group and, under turns, read a clock that
        stands still while the twin's server is held."""
        group, held = self.groups[label], self.sched.held

        def attach(tid: int) -> Any:
            clock.held_by(held.holder(label) if self.sched.turns else None)
            return group.add_thread(tid)
        return attach

    def _rotation(self, runs: list[ConfigState], order: tuple[int, ...]) -> pairing.Rotation:
        """What moves the twins while a pair runs: their CPU sets swapped (duet) or their turns (turns)."""
        labels = self.orch.plan.labels
        if self.sched.turns:
            first = sorted(runs, key=lambda s: order[labels.index(s.label)])
            twins = {s.label: self.sched.freezers[s.label] for s in first} if len(runs) == TWINS else {}
            return turns.Turns(twins, self.sched.held, turns.TURN_SECONDS)
        swapped = list(self.active) if len(runs) == TWINS else []
        return CpuSwapper([self.groups[s.label].set_cpus for s in swapped], self.sched.slots,
                          tuple(order[labels.index(s.label)] for s in swapped), self.sched.swap_seconds)

    def _ready(self, step: str) -> None:
        """Start the step's clients and ramp them up before its first pair, one twin after the other: clients
        forked by two threads at once could inherit each other's pipes (and a client's exit would go unseen)."""
        for state in list(self.active):
            self._pair(f"ready:{step}", lambda t, s=step: (lambda: t.ready(s)), only=[state])

    def _label_of(self, trial: SteppedTrial) -> str:
        return next(label for label, t in self.trials.items() if t is trial)

    def _pair(self, what: str, job_of: Callable[[SteppedTrial], Callable[[], Any]],
              only: list[ConfigState] | None = None) -> dict[str, Arm]:
        """One simultaneous pair of the active twins (``only``: of these alone; CPU sets set first); a twin whose
        job failed leaves the block (its trial is recorded as failed), the other goes on alone."""
        runs = [s for s in self.active if only is None or s in only]
        if not runs:
            return {}
        order = self.orders[min(self.index, len(self.orders) - 1)]
        self.index += 1
        labels = self.orch.plan.labels
        cpus = "|".join(self.sched.slots[k] for k in order)  # the configs in plan order
        for state in self.active:
            self.groups[state.label].set_cpus(self.sched.slots[order[labels.index(state.label)]])
        readers = {s.label: self.groups[s.label].read for s in runs}
        devices = self.sched.devices

        def between(label: str) -> Callable[[Any, Any], dict[str, float]]:
            device = devices.get(label)
            picked = None if device is None else {device}
            return lambda before, after: cgroups.used_between(before, after, picked)

        with self._rotation(runs, order) as swapper:
            arms = run_pair({s.label: self.workers[s.label] for s in runs},
                            {s.label: job_of(self.trials[s.label]) for s in runs}, readers,
                            {s.label: between(s.label) for s in runs}, swapper.done)
        self.sched.record_pair(self.block, what, cpus, skew_us(arms) if len(arms) == TWINS else None, swapper)
        for label, arm in arms.items():
            state = self.orch.states[label]
            if arm.error is not None and not self.orch.guarded(state, self.results,
                                                               lambda e=arm.error: _raise(e)):
                self.trials[label].abort()
                self.active.remove(state)
        return arms

    def _record_waits(self, label: str, result: TrialResult) -> None:
        """Rows ``duet/<step>/<metric>``: per round where the trial pairs rounds, else the mean of the step's runs
        per block and their total."""
        rec, waits = self.recs[label], self.waits[label]
        status = result.status
        if self.by_round:
            for (step, rep), used in waits.items():
                for metric, value in used.items():
                    if metric in WAITS:
                        rec.add("duet", step, metric, value, WAITS[metric], status=status, round=rep + 1)
            return
        totals: dict[str, float] = {}
        for step in self.steps:
            runs = [used for (s, _), used in waits.items() if s == step]
            for metric in WAITS:
                values = [u[metric] for u in runs if metric in u]
                if values:
                    mean = statistics.fmean(values)
                    rec.add("duet", step, metric, mean, WAITS[metric], status=status)
                    totals[metric] = totals.get(metric, 0.0) + mean
        for metric, value in totals.items():
            rec.add("duet", "total", metric, value, WAITS[metric], status=status)
