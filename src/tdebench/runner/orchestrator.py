"""Execute a plan: provision twins, load identical data, verify, run interleaved trials, check answers.

Faults: a trial that fails (server died, query error, refresh error) is recorded as failed with the reason,
the instance is restarted and the run goes on; after ``max_failures`` consecutive failures a config is
abandoned while the others continue. Resume: trials recorded as completed in measurements.csv are skipped.

Reliability: what the run owns (work dir, instance dirs, servers) is recorded for ``tdebench cleanup``
(:mod:`tdebench.runner.ownership`); the disk guard refuses a run whose databases cannot fit, and a disk that
fills up anyway ends the run with an EnvironmentProblem, the rows written so far intact
(:mod:`tdebench.runner.diskguard`).

Schedules and stopping: blocks come from :class:`~tdebench.runner.precision.BlockSequence` (the plan's trials, or
with ``--precision`` until the stopping rule is met); ``--schedule query`` interleaves the twins step by step inside
a block (:mod:`tdebench.runner.schedule`). Before the first block the twins settle (background work done, servers
quiet, optionally pinned: :mod:`tdebench.runner.settle`); every trial is watched by the sampler, the step probe and
the host's conditions (:mod:`tdebench.runner.instruments`).
"""

from __future__ import annotations

import errno
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tdebench import __version__
from tdebench.encryption import redact
from tdebench.engines import get_engine
from tdebench.engines.toolkit import process
from tdebench.api.engine import Config, Engine, Instance
from tdebench.api.manifest import new_manifest
from tdebench.measure.host import host_facts
from tdebench.measure.sampler import ResourceSeries
from tdebench.measure.storage import config_storage
from tdebench.results.rundir import RunDirectory, utc_now
from tdebench.runner import cache, diskguard, owned, pinning, removal, settle
from tdebench.runner.instruments import Watch, record_resources, start_watch, stop_watch
from tdebench.runner.precision import BlockSequence, watched_series
from tdebench.runner.schedule import QuerySchedule
from tdebench.runner.duet import DuetSchedule
from tdebench.runner.memory import MemoryRegimes
from tdebench.runner.restarts import TwinRestarts
from tdebench.runner.common_wait import CommonWait
from tdebench.runner.faults import FaultRunner
from tdebench.runner.keyserver.servers import KeyServers
from tdebench.runner.twins import Digests, answer_difference, plain_twin
from tdebench.runner.keyserver.servers import check_plan as check_key_servers
from tdebench.api.events import RunListener
from tdebench.runner.ownership import Ownership
from tdebench.runner.verifying import check_instance
from tdebench.runner.progress import RunProgress
from tdebench.api.plan import Block, RunPlan
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.verify.threats import ThreatModel
from tdebench.workloads import make_workload


@dataclass
class RunOutcome:
    """What happened: failures and verification problems decide the exit code."""

    rundir: RunDirectory
    failed_steps: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    abandoned: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed_steps and not self.problems and not self.abandoned


class Orchestrator:
    """Runs one plan into one run directory."""

    def __init__(self, plan: RunPlan, rundir: RunDirectory, listener: RunListener | None = None,
                 command_line: list[str] | None = None, work_root: Path | None = None,
                 completed: set[tuple[int, str]] | None = None, manifest: dict[str, Any] | None = None,
                 disk_check: bool = True, verify_only: bool = False) -> None:
        self.plan = plan
        self.verify_only = verify_only  # `tdebench verify`: provision, load and verify, no trials
        self.rundir = rundir
        self.ui = listener or RunListener()
        self.command_line = command_line or sys.argv
        self.work_root = work_root
        self.completed = completed or set()
        pending = [b for b in plan.blocks() for label in b.order if (b.number, label) not in self.completed]
        self.progress = RunProgress(len(pending), warmup=sum(b.warmup for b in pending))
        self.run_id = rundir.path.name
        self.engines: dict[str, Engine] = {c.engine: get_engine(c.engine) for c in plan.configs}
        self.states: dict[str, ConfigState] = {}
        self.workload = make_workload(plan, rundir)
        self.digests: Digests = {}
        self.verification: dict[str, Any] = {"schema_version": 1, "configs": {}}
        self.threats = ThreatModel(tuple(self.workload.known_plaintext), plan.workload)  # docs/security.md
        self.manifest: dict[str, Any] = manifest or {}
        self.outcome = RunOutcome(rundir)
        self.disk_check = disk_check
        self._conditions: dict[str, dict[str, Any] | None] = {}
        self._probes: dict[str, Any] = {}
        self.started = time.monotonic()  # --max-time counts from here (this invocation, data and load included)
        self.schedule: QuerySchedule | DuetSchedule | None = (
            QuerySchedule(self) if plan.schedule == "query" else DuetSchedule(self) if plan.schedule in ("duet", "turns")
            else None)
        self.regimes = MemoryRegimes(plan)  # --memory-ratio (runner/memory.py)
        self.restarts = TwinRestarts(plan, self.engines, self.manifest)  # --restart-twins
        self.common_wait = CommonWait(plan, self.workload.wait_split(), self.manifest)  # pages from the disk
        self.keys = KeyServers(plan, self.engines)  # --keys openbao (docs/key-management.md)
        self.faults = FaultRunner(plan, self.manifest, lambda text: self.ui.message(text), self.keys,  # --fault
                                  lambda: self.workload.table_names()[0])

    # ------------------------------------------------------------------------------------------
    def execute(self) -> RunOutcome:
        """Do the whole run; instances are destroyed on success, error and Ctrl-C."""
        reserve = diskguard.Reserve(self.rundir.path)
        self._start_manifest({})
        reserve.take()
        try:
            self._check_environment()
            data_facts = self.workload.prepare(self.ui)
            self.threats.known = tuple(self.workload.known_plaintext)  # a workload of the user's data samples it
            self.manifest["data"] = data_facts
            self._record_shown()
            note = self._check_space(data_facts) if self.disk_check else None
            if note:  # again with the real input size; said only when space is tight
                self.ui.message(note)
            with ExitStack() as stack:
                self._own(stack)
                workdir = self._workdir(stack)
                process.set_disposable(not any(c.keep for c in self.plan.configs))
                stack.callback(process.set_disposable, False)
                try:
                    self._work(stack, workdir)
                except KeyboardInterrupt:
                    if not any(c.keep for c in self.plan.configs):  # the data is deleted anyway: no clean
                        process.kill_servers()                       # shutdown, be gone within seconds
                    raise
            self._check_answers()
        except KeyboardInterrupt:
            try:
                self._finish_manifest("interrupted")
            except OSError:
                pass  # a full or read-only disk: the manifest keeps its last state, resume still works
            raise
        except BaseException as exc:
            if process.interrupted():  # e.g. a driver call cut short by the interrupt: still an interrupt
                self._finish_manifest("interrupted")
                raise KeyboardInterrupt(f"interrupted ({type(exc).__name__} while stopping)") from exc
            cause = self._instance_problem() or exc  # e.g. a server that waited for disk space: the real reason
            if diskguard.is_disk_full(cause):
                raise diskguard.disk_full_error(cause, self.rundir, self._work_root(), reserve,
                                                self._finish_manifest) from exc
            try:
                self._finish_manifest(f"failed: {redact(str(cause))}")
            except OSError:
                pass  # the original error says more
            if cause is not exc:
                raise cause from exc
            raise
        finally:
            reserve.release()
        self._finish_manifest("completed" if self.outcome.ok else "completed with failures")
        return self.outcome

    def _work(self, stack: ExitStack, workdir: Path) -> None:
        """The key server, the instances, the blocks, the threat model's last pass, the search for keys in files."""
        if self.keys.active:  # before any instance starts
            self.manifest["key_server"] = self.keys.start(stack, workdir, self.ui.message)
        self._provision_all(stack, workdir)
        self.ownership.stop_polling()
        self._check_answers()
        if not self.verify_only:
            self._run_blocks(stack)
        self._finish_threats()
        if self.keys.active:  # no key of the key server in a file of the run
            dirs = {s.instance.data_dir.resolve() for s in self.states.values() if s.instance.scannable}
            self.keys.verify_no_leak([workdir, self.rundir.path, *dirs], self.verification, self.outcome.problems,
                                     self.ui.message)
            self._write_verification()

    def _check_environment(self) -> None:
        """Binaries, what each spec needs (gocryptfs, pgcrypto), the key server, settings against the workload's
        tables, the work dir and its space: before any work."""
        for engine in self.engines.values():
            engine.check_available()
        check_key_servers(self.plan)
        tables = self.workload.tables()
        for config in self.plan.configs:
            engine = self.engines[config.engine]
            engine.check_spec_available(config.spec)
            engine.check_tables(config, tables)
            self.workload.check_engine(config.label, engine)
        self.regimes.check_before_work(self.engines, self.workload.estimated_input_bytes())
        self.faults.check(self.workload.planned_trial_seconds())
        self._work_root().mkdir(parents=True, exist_ok=True)
        if self.disk_check:  # before generating data: an absurd scale factor is refused at once
            self._check_space({})

    def _check_space(self, data_facts: dict[str, Any]) -> str | None:
        return diskguard.check_space(self.plan, data_facts, self._work_root(), self.workload.estimated_input_bytes(),
                                     self.workload.describe())

    def _instance_problem(self) -> BaseException | None:
        """The first problem an engine found by watching its instance (``Instance.problem()``)."""
        for state in self.states.values():
            found = state.instance.problem()
            if found is not None:
                return found
        return None

    def _work_root(self) -> Path:
        return self.work_root or Path(tempfile.gettempdir())

    def _own(self, stack: ExitStack) -> None:
        """Record what this run owns until everything is gone (registered first, so it closes last)."""
        self.ownership = Ownership(self.run_id, self.rundir.path, keep=any(c.keep for c in self.plan.configs),
                                   on_problem=self.ui.message)
        stack.callback(self.ownership.close)

    def _workdir(self, stack: ExitStack) -> Path:
        root = self._work_root()
        root.mkdir(parents=True, exist_ok=True)
        owned.protect(root)  # the user's: a tdebench-* name above it must not make it ours
        workdir = Path(tempfile.mkdtemp(prefix=f"tdebench-{self.run_id}-", dir=root))
        workdir.chmod(0o711)  # servers running as an unprivileged user must traverse it
        self.ownership.add_dir(workdir)
        if any(c.keep for c in self.plan.configs):
            self.ui.message(f"keeping instance data under {workdir}")
        else:
            stack.callback(removal.remove_work_dir, workdir, self.ui.message)  # once the instances are destroyed
        return workdir

    # ------------------------------------------------------------------------------------------
    def _provision_all(self, stack: ExitStack, workdir: Path) -> None:
        """Start every instance, have the workload prove its statements on each (empty), then load them: SQL an
        engine refuses costs no load."""
        started = [self._start(stack, config, workdir) for config in self.plan.configs]
        for state in started:
            self.workload.prove(state)
        for state in started:
            self._load(state, workdir)

    def _start(self, stack: ExitStack, config: Config, workdir: Path) -> ConfigState:
        """Create and start ``config``'s instance (empty)."""
        engine = self.engines[config.engine]
        instance = engine.create_instance(config, workdir, self.workload.database)
        instance.use_translator(self.workload.sql_translator())
        stack.callback(instance.destroy)
        self._own_paths(instance)
        self.keys.take_keys(instance)  # a config whose keys live on the key server: provisioned there first
        instance.start()
        self._own_instance(instance)
        state = ConfigState(config, engine, instance)
        self.states[config.label] = state
        return state

    def _load(self, state: ConfigState, workdir: Path) -> None:
        """Load, validate and verify a started instance (and snapshot it for ``--reset snapshot``)."""
        config, instance = state.config, state.instance
        rec = self._recorder(config.label, 0)
        try:
            facts = self.workload.load(state, rec, self.ui)
            self.outcome.failed_steps.extend(self.workload.validate(state, rec, self.ui))
            self._verify_instance(config.label, instance)
            rec.add("storage", "total", "bytes", instance.storage_bytes(), "bytes")
        finally:
            self.rundir.append(rec.rows)
        self._record_config(state, facts)
        if self.plan.reset == "snapshot":
            state.snapshot = workdir / f"{config.label}.snapshot"
            self.ui.message(f"snapshot of {config.label} for resets between trials")
            instance.snapshot(state.snapshot)

    def _own_paths(self, instance: Instance) -> None:
        """Directories an instance makes outside the work dir before it starts."""
        for path in instance.owned_paths():
            self.ownership.add_dir(Path(path).resolve())

    def _own_instance(self, instance: Instance) -> None:
        """Record the started instance's directories (relocated ones, socket directories) for ``tdebench cleanup``."""
        if not instance.scannable:  # external servers: no directory or process of ours
            return
        for path in [instance.data_dir, *owned.socket_dirs(instance.server_pids())]:
            self.ownership.add_dir(Path(path).resolve())
        self._own_paths(instance)

    def _verify_instance(self, label: str, instance: Instance) -> None:
        """Status query + at-rest scan; an encrypted config that is not encrypted is refused."""
        entry, refusal = check_instance(label, instance, self.workload, self.threats, self.ui)
        self.verification["configs"][label] = entry
        self._write_verification()
        if refusal is not None:
            raise refusal

    def _finish_threats(self) -> None:
        """The threat model's final pass (logs and temp files after the workload, backups) before clean-up."""
        for label, state in self.states.items():
            entry = self.verification["configs"].get(label)
            if entry and not state.abandoned:
                self.threats.finish(label, state.instance, entry, self.rundir.path)
        self._write_verification()

    def _record_config(self, state: ConfigState, facts: dict[str, Any]) -> None:
        instance, engine = state.instance, state.engine
        entry = {"label": state.config.label, "engine": engine.name, "encryption": str(instance.config.spec),
                 "engine_version": instance.server_version or engine.version(),
                 "dialect": asdict(instance.dialect), "settings": instance.settings(),
                 "storage_bytes": instance.storage_bytes(), **facts}
        verified = self.verification["configs"].get(state.config.label, {})
        entry.update({k: verified[k] for k in ("label_status", "label_note") if k in verified})
        entry["storage"] = config_storage(state.instance, self.workload.sized_tables() or None)
        cache = engine.cache_type.configured_bytes(entry["settings"]) if engine.cache_type is not None else None
        entry.update({"cache_bytes": cache} if cache else {})  # the configured size (a memory ratio resizes it)
        entry["keys"] = state.config.keys if not state.config.spec.is_plain else "none"
        entry.update({"key_source": self.keys.facts(state.config.label)} if self.keys.active else {})
        configs = [c for c in self.manifest.get("configs", []) if c.get("label") != state.config.label]
        self.manifest["configs"] = [*configs, entry]
        self.rundir.write_manifest(self.manifest)

    # ------------------------------------------------------------------------------------------
    def _run_blocks(self, stack: ExitStack) -> None:
        """Settle the twins, then run the blocks the sequence yields (the plan's, or until precise enough)."""
        self.manifest["settle"] = settle.settle(self.plan, self.states, self.ui, stack,
                                                self._work_root())  # --pin: where the data disk interrupts
        self.rundir.write_manifest(self.manifest)
        sequence = BlockSequence(self.plan, self.rundir, watched_series(self.plan, self.workload), self.manifest, self.ui,
                                 self.started)
        if sequence.max_time is not None:
            self.progress.deadline = self.started + sequence.max_time
        done = {b for b, _ in self.completed if all((b, c) in self.completed for c in self.plan.labels)}
        if isinstance(self.schedule, DuetSchedule):  # its cgroups go at the end of the run
            stack.callback(self.schedule.close)
        with self.keys.usage([s.instance for s in self.states.values()], self.manifest):  # requests, CPU
            for block in sequence.blocks(done):
                if self._nothing_left_to_measure():
                    break
                self._run_block(block)
        self.manifest["blocks_run"] = sequence.blocks_run

    def _nothing_left_to_measure(self) -> bool:
        """Every config abandoned, or (with ``--precision``) fewer than two left to compare: more blocks would only
        repeat the same estimate until ``--max-time``."""
        active = [s for s in self.states.values() if not s.abandoned]
        if active and not (self.plan.precision and len(active) < 2 and len(self.states) >= 2):
            return False
        self.ui.message("no config left to measure (" + ", ".join(self.outcome.abandoned) + "); stopping")
        return True

    def _run_block(self, block: Block) -> None:
        self.restarts.before(block, self.pending(block, replay=False), self.ui)
        if self.schedule is None or not self.schedule.run(block):
            for state in self.pending(block):
                self.run_trial(block, state)
        self.rundir.append(self.common_wait.finish(block, lambda label, b: self.trial_recorder(self.states[label], b)))

    def pending(self, block: Block, replay: bool = True) -> list[ConfigState]:
        """The configs ``block`` still has to run, in its order; those a resumed run completed are replayed
        (unless ``replay`` is False)."""
        out = []
        for label in block.order:
            state = self.states[label]
            if state.abandoned:
                continue
            if (block.number, self.regimes.row_label(label, block)) in self.completed:
                if replay:
                    self._replay(block, state)
                continue
            out.append(state)
        return out

    def _replay(self, block: Block, state: ConfigState) -> None:
        """Resume: bring the reloaded database to the state the completed trial left its twins in."""
        self.workload.replay(state, block.number)

    def run_trial(self, block: Block, state: ConfigState) -> None:
        label = state.config.label
        name = self.regimes.trial_name(block)
        rec = self.trial_recorder(state, block)
        results: dict[str, TrialResult] = {}
        watch = None
        self.ui.task_started("trial", f"{name} {rec.config}{self.progress_note()}", None)
        try:  # an interrupt after the line that says the trial started says where it cut the trial
            self.progress.start()
            self.note_in_flight(block, [label])
            if self.guarded(state, results, lambda: self.prepare_trial(state, rec)):
                watch = self.watch(state)
                self.guarded(state, results, lambda: results.__setitem__(label, self.faults.trial(
                    state, block, rec, lambda: self.workload.trial(state, block.number, rec), self.workload.headline())))
        finally:
            self.progress.finish(warmup=block.warmup)
            self.ui.task_finished("trial")
            series = self.unwatch(block, state, watch) if watch is not None else None
        self.end_trial(block, state, rec, results[label], series)

    def progress_note(self) -> str:
        """`` · 5 of 12 trials, ~40 min left`` (nothing for a --precision run, whose length the rule decides)."""
        return "" if self.plan.open_ended else f" · {self.progress.label()}"

    def note_in_flight(self, block: Block, labels: list[str]) -> None:
        """The trial(s) in flight, so a reader (or --resume) knows what a crash interrupted."""
        self.manifest["in_flight"] = {"config": labels[0], "configs": labels, "block": block.number,
                                      "started_at": utc_now()}
        self.rundir.write_manifest(self.manifest)

    def guarded(self, state: ConfigState, results: dict[str, TrialResult], step: Callable[[], object]) -> bool:
        """Run one part of a trial; a failure becomes the trial's failed result (False), except an interrupt,
        a full disk or a problem the engine saw, which end the run."""
        try:
            step()
            return True
        except Exception as exc:  # noqa: BLE001 - a failed trial never stops the run ...
            if process.interrupted():  # ... unless it failed because a signal cut a driver call short
                raise KeyboardInterrupt(f"interrupted ({type(exc).__name__} in a trial)") from exc
            if diskguard.is_disk_full(exc) or state.instance.problem() is not None:
                raise  # ... unless the disk is full (or the engine saw why): every further trial would fail too
            results[state.label] = TrialResult(failures=[f"{type(exc).__name__}: {redact(str(exc))}"])
            return False

    def watch(self, state: ConfigState) -> Watch:
        """Start the trial's instruments (sampler, step probe, host readings); --pin/--nice: a restarted server too."""
        pinning.place_servers(state, self.plan.pin, self.plan.nice)
        return start_watch(state, self._all_server_pids)

    def unwatch(self, block: Block, state: ConfigState, watch: Watch) -> ResourceSeries | None:
        """Stop the instruments; the sampler's series is written, the probe and host conditions kept for
        :meth:`end_trial`."""
        self._conditions[state.label] = stop_watch(watch, state, self._all_server_pids)
        self._probes[state.label] = watch.probe
        return self._save_samples(block, state)

    def _all_server_pids(self) -> list[int]:
        pids: list[int] = []
        for st in self.states.values():
            if st.instance.scannable:
                try:
                    pids.extend(st.instance.server_pids())
                except Exception:  # noqa: BLE001 - a server being restarted
                    continue
        return pids

    def end_trial(self, block: Block, state: ConfigState, rec: Recorder, result: TrialResult,
                  series: ResourceSeries | None) -> None:
        """Record what the trial measured and how it ended (failures restart or abandon the config)."""
        label = state.config.label
        if process.interrupted():  # a workload that records a cut-short query as a failure and goes on
            raise KeyboardInterrupt("interrupted during a trial")
        found = state.instance.problem()
        if found is not None:  # its statements were killed: the failures say only "lost connection"
            raise found
        full = [f for f in result.failures if diskguard.text_is_disk_full(f)]
        if full:  # left unrecorded: the trial in flight is redone on resume
            raise OSError(errno.ENOSPC, full[0])
        record_resources(rec, series, result.status, lambda e: self.ui.message(
            f"resources of {state.label} block {block.number} not recorded: {e}"))
        probe = self._probes.pop(label, None)
        if probe is not None:
            probe.record(rec, result.status)
        conditions = self._conditions.pop(label, None)
        if conditions is not None:
            probed = {"cpu_tick_fallbacks": probe.tree.fallbacks, "cpu_windows": probe.tree.windows} if probe else {}
            self.manifest.setdefault("conditions", []).append({"block": block.number, "config": label,
                                                               **conditions, **probed})
        self.digests[(block.number, label)] = result.answer_digest
        difference = answer_difference(self.plan, self.digests, block.number, state.config)
        if difference:
            self.outcome.problems.append(difference)
        self._close_trial(block, state, rec, result)

    def _save_samples(self, block: Block, state: ConfigState) -> ResourceSeries | None:
        """Stop the trial's sampler and write its series under samples/ (None when nothing was sampled)."""
        sampler, state.sampler = state.sampler, None
        if sampler is None:
            return None
        try:
            series = sampler.stop()
            series.write_csv(self.rundir.path / "samples" / state.label / f"block{block.number:03d}.csv")
            return series
        except Exception as exc:  # noqa: BLE001 - sampling must never cost a measured trial
            self.ui.message(f"resource samples of {state.label} block {block.number} not recorded: {exc}")
            return None

    def prepare_trial(self, state: ConfigState, rec: Recorder) -> None:
        """Reset to the snapshot and/or empty the caches before a trial, as the plan asks."""
        if state.snapshot is not None:
            state.instance.restore(state.snapshot)
            state.applied.clear()
        if self.plan.cache == "cold":
            note = cache.make_cold(state.instance)
            self.manifest.setdefault("cache_notes", {})[state.config.label] = note

    def _close_trial(self, block: Block, state: ConfigState, rec: Recorder, result: TrialResult) -> None:
        label = state.config.label
        if result.failures:
            state.failures_in_a_row += 1
            reason = "; ".join(result.failures)[:2000]
            rec.add("trial", "trial", "completed", 0, "flag", status="failed")
            self.outcome.failed_steps.append(f"{label} block {block.number}: {reason}")
            self.manifest.setdefault("failures", []).append({"config": label, "block": block.number,
                                                             "reason": reason, "at": utc_now()})
            self.ui.message(f"{label} block {block.number} failed: {reason[:200]}")
            self._recover(state, block)
        else:
            state.failures_in_a_row = 0
            rec.add("trial", "trial", "completed", 1, "flag")
            self.common_wait.collect(label, rec.rows)
        self.rundir.append(rec.rows)
        self.manifest.pop("in_flight", None)
        self.rundir.write_manifest(self.manifest)

    def _recover(self, state: ConfigState, block: Block) -> None:
        """Restart the instance after a failed trial; abandon the config after too many failures in a row."""
        label = state.config.label
        if state.failures_in_a_row >= self.plan.max_failures:
            state.abandoned = True
            message = f"{label} abandoned after {state.failures_in_a_row} consecutive failed trials"
            self.outcome.abandoned.append(message)
            self.manifest.setdefault("abandoned", []).append(label)
            self.ui.message(message)
            return
        try:
            state.instance.restart()
            # finish the failed trial's data changes, so the data match the twins' again
            self.workload.recover(state, block.number)
        except Exception as exc:  # noqa: BLE001 - counted as another failure next time
            self.ui.message(f"restart of {label} failed: {redact(str(exc))[:200]}")

    # ------------------------------------------------------------------------------------------
    def trial_recorder(self, state: ConfigState, block: Block) -> Recorder:
        """The recorder of ``state``'s trial in ``block``; with --memory-ratio its rows carry the ratio and the
        instance's cache is sized for it first."""
        rec = self._recorder(state.label, block.number)
        self.regimes.label_recorder(rec, block)
        self.regimes.apply(state, block, self.manifest, self.ui.message)
        return rec

    def _recorder(self, label: str, block: int) -> Recorder:
        config = self.plan.config(label)
        return Recorder(self.run_id, block, label, config.engine, str(config.spec), workload=self.plan.workload,
                        status="warmup" if block == 0 and self.plan.warmup_trials else "ok")

    def _check_answers(self) -> None:
        plain_of = {c.label: plain_twin(self.plan, c) for c in self.plan.configs}
        verdicts = self.workload.answer_verdicts(plain_of)
        for label, verdict in verdicts.items():
            entry = self.verification["configs"].setdefault(label, {})
            if entry.get("answers") == verdict:
                continue
            entry["answers"] = verdict
            entry["answers_equal"] = verdict["answers_equal"]
            if verdict["answers_equal"] is False:
                detail = (verdict.get("plain_mismatches") or verdict.get("reference_mismatches") or ["?"])[0]
                self.outcome.problems.append(f"answers of {label} differ: {detail}")
        self._write_verification()

    def _write_verification(self) -> None:
        self.rundir.write_verification(self.verification)

    def _record_shown(self) -> None:
        """The headline series the report's verdict is about, and how the workload is shown (its presentation:
        `tdebench report` rebuilds from the run directory alone); known once the workload has prepared its data."""
        headline = self.workload.headline()
        if headline is not None:
            self.manifest["headline"] = dict(zip(("test", "step", "metric"), headline))
        self.manifest["plan"]["presentation"] = self.workload.presentation().to_json()
        self.rundir.write_manifest(self.manifest)

    def _start_manifest(self, data_facts: dict[str, Any]) -> None:
        command_line = [redact(a) for a in self.command_line]
        if self.manifest:
            self.manifest.setdefault("resumed", []).append({"at": utc_now(), "command_line": command_line})
        else:
            self.manifest.update(new_manifest(self.run_id, {}, command_line))
        self.manifest.update({
            "tool": {"name": "tdebench", "version": __version__},
            "run_id": self.run_id,
            "status": "running",
            "host": host_facts(self.rundir.path),
            "plan": {**self.plan.to_json(), "workload_plan": self.workload.plan_json()},
            "data": data_facts,
        })
        self.rundir.write_manifest(self.manifest)

    def _finish_manifest(self, status: str) -> None:
        self.manifest.update(status=status, finished_at=utc_now(), problems=self.outcome.problems,
                             failed_steps=self.outcome.failed_steps, abandoned=self.outcome.abandoned)
        self.rundir.write_manifest(self.manifest)
