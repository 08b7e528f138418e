"""Execute a plan: provision twins, load identical data, verify, run interleaved trials, check answers."""

from __future__ import annotations

import shutil
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench import __version__
from tdebench.encryption import redact
from tdebench.engines import get_engine
from tdebench.engines.base import Engine, Instance
from tdebench.errors import RunFailed, TdebenchError
from tdebench.measure.host import host_facts
from tdebench.results.rundir import Measurement, RunDirectory, utc_now
from tdebench.runner.events import RunListener
from tdebench.runner.plan import Block, RunPlan
from tdebench.verify.answers import AnswerSet, answer_verdicts, load_reference
from tdebench.verify.atrest import verify_at_rest
from tdebench.workloads.tpch import answers, schema
from tdebench.workloads.tpch.datagen import ensure_data
from tdebench.workloads.tpch.loader import LoadResult, load_tpch
from tdebench.workloads.tpch.power import StreamResult, run_stream


@dataclass
class RunOutcome:
    """What happened: failures and verification problems decide the exit code."""

    rundir: RunDirectory
    failed_steps: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed_steps and not self.problems


class Orchestrator:
    """Runs one plan into one run directory."""

    def __init__(self, plan: RunPlan, rundir: RunDirectory, listener: RunListener | None = None,
                 command_line: list[str] | None = None, work_root: Path | None = None) -> None:
        self.plan = plan
        self.rundir = rundir
        self.ui = listener or RunListener()
        self.command_line = command_line or sys.argv
        self.work_root = work_root
        self.run_id = rundir.path.name
        self.engines: dict[str, Engine] = {c.engine: get_engine(c.engine) for c in plan.configs}
        self.instances: dict[str, Instance] = {}
        self.answer_sets: dict[str, AnswerSet] = {}
        self.verification: dict[str, Any] = {"schema_version": 1, "configs": {}}
        self.manifest: dict[str, Any] = {}
        self.outcome = RunOutcome(rundir)

    # ------------------------------------------------------------------------------------------
    def execute(self) -> RunOutcome:
        """Do the whole run; instances are destroyed on success, error and Ctrl-C."""
        for engine in self.engines.values():
            engine.check_available()
        data_dir, data_facts = self._data()
        self._start_manifest(data_dir, data_facts)
        try:
            with ExitStack() as stack:
                workdir = self._workdir(stack)
                for config in self.plan.configs:
                    self._provision(stack, config, workdir, data_dir)
                self._write_verification()
                for block in self.plan.blocks():
                    self._run_block(block)
            self._check_answers()
        except KeyboardInterrupt:
            self._finish_manifest("interrupted")
            raise
        except BaseException as exc:
            self._finish_manifest(f"failed: {redact(str(exc))}")
            raise
        self._finish_manifest("completed" if self.outcome.ok else "completed with failures")
        return self.outcome

    def _data(self) -> tuple[Path, dict[str, Any]]:
        self.ui.task_started("data", f"TPC-H data SF {self.plan.sf:g}", None)
        try:
            return ensure_data(self.plan.sf, self.plan.data_dir, progress=self.ui.message)
        finally:
            self.ui.task_finished("data")

    def _workdir(self, stack: ExitStack) -> Path:
        root = self.work_root or Path(tempfile.gettempdir())
        root.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix=f"tdebench-{self.run_id}-", dir=root))
        workdir.chmod(0o711)  # servers running as an unprivileged user must traverse it
        keep = any(c.keep for c in self.plan.configs)
        if keep:
            self.ui.message(f"keeping instance data under {workdir}")
        else:
            stack.callback(shutil.rmtree, workdir, True)
        return workdir

    # ------------------------------------------------------------------------------------------
    def _provision(self, stack: ExitStack, config, workdir: Path, data_dir: Path) -> None:
        engine = self.engines[config.engine]
        instance = engine.create_instance(config, workdir)
        stack.callback(instance.destroy)
        self.ui.task_started(f"load-{config.label}", f"load {config.label}", len(schema.TABLES))
        instance.start()
        self.instances[config.label] = instance

        def on_table(table: str, rows: int, seconds: float) -> None:
            self.ui.task_advanced(f"load-{config.label}", 1, f"load {config.label}: {table}")
            size = (data_dir / f"{table}.tbl").stat().st_size
            self._record(config.label, 0, 0, "load", table, [("elapsed", seconds, "s"), ("rows", rows, "rows"),
                                                              ("input_bytes", size, "bytes")])

        load = load_tpch(instance, engine.dialect, data_dir, on_table)
        self.ui.task_finished(f"load-{config.label}")
        self._record(config.label, 0, 0, "load", "total", [("elapsed", load.total_seconds, "s")])
        self._record(config.label, 0, 0, "load", "constraints", [("elapsed", load.constraints_seconds, "s")])
        self._verify_instance(config.label, instance)
        self._record_config(config.label, instance, engine, load)

    def _verify_instance(self, label: str, instance: Instance) -> None:
        """Status query + at-rest scan; an encrypted config that is not encrypted is refused."""
        self.ui.message(f"verifying encryption at rest for {label}")
        entry: dict[str, Any] = {"engine": instance.config.engine, "encryption": str(instance.config.spec)}
        try:
            entry["status"] = instance.encryption_status()
            instance.check_encrypted([t.name for t in schema.TABLES])
            entry.update(verify_at_rest(instance))
        except TdebenchError as exc:
            entry.update(passed=False, error=exc.one_line())
        self.verification["configs"][label] = entry
        self._write_verification()
        if not entry.get("passed"):
            what = entry.get("error") or f"{entry.get('marker_hits', 0)} marker hits in {entry.get('files_with_hits')}"
            if instance.config.spec.is_plain:
                what = f"the plain twin shows no plaintext, so the scanner cannot be trusted ({what})"
            raise RunFailed(f"at-rest verification failed for {label}: {what}",
                            "do not trust this configuration; see verification.json")

    def _record_config(self, label: str, instance: Instance, engine: Engine, load: LoadResult) -> None:
        entry = {"label": label, "engine": engine.name, "encryption": str(instance.config.spec),
                 "engine_version": engine.version(), "dialect": engine.dialect, "settings": instance.settings(),
                 "storage_bytes": instance.storage_bytes(), "load_seconds": round(load.total_seconds, 6),
                 "load_rows": load.rows}
        breakdown = getattr(instance, "storage_breakdown", None)
        if callable(breakdown):
            entry["storage"] = breakdown()
        self.manifest.setdefault("configs", []).append(entry)
        self.rundir.write_manifest(self.manifest)

    # ------------------------------------------------------------------------------------------
    def _run_block(self, block: Block) -> None:
        for label in block.order:
            trial = block.number
            name = "warm-up" if block.warmup else f"trial {trial}/{self.plan.trials}"
            self.ui.task_started("trial", f"{name} {label}", 22)
            result = run_stream(self.instances[label], self.engines[self.plan.config(label).engine].dialect,
                                self.plan.sf, on_query=lambda run: self.ui.task_advanced("trial", 1))
            self.ui.task_finished("trial")
            self._record_stream(label, block, result)
            if label not in self.answer_sets and result.ok:
                self._keep_answers(label, result)

    def _record_stream(self, label: str, block: Block, result: StreamResult) -> None:
        status = "warmup" if block.warmup else "ok"
        rows = [Measurement(self.run_id, block.number, block.number, label, *self._cfg(label), "tpch", "power",
                            f"q{run.number:02d}", "elapsed", run.seconds, "s", result.stream, status=status)
                for run in result.runs]
        for number, error in result.failures.items():
            rows.append(Measurement(self.run_id, block.number, block.number, label, *self._cfg(label), "tpch",
                                    "power", f"q{number:02d}", "elapsed", float("nan"), "s", result.stream,
                                    status="failed"))
            self.outcome.failed_steps.append(f"{label} block {block.number} q{number:02d}: {redact(error)}")
        total_status = status if result.ok else "failed"
        rows.append(Measurement(self.run_id, block.number, block.number, label, *self._cfg(label), "tpch", "power",
                                "total", "elapsed", sum(r.seconds for r in result.runs), "s", result.stream,
                                status=total_status))
        rows.append(Measurement(self.run_id, block.number, block.number, label, *self._cfg(label), "tpch", "power",
                                "wall", "elapsed", result.wall_seconds, "s", result.stream, status=total_status))
        self.rundir.append(rows)

    def _keep_answers(self, label: str, result: StreamResult) -> None:
        self.answer_sets[label] = {run.number: [answers.normalize_row(r) for r in run.rows] for run in result.runs}
        if self.plan.keep_answers:
            target = self.rundir.answers_dir(label)
            for run in result.runs:
                answers.write_answer_csv(target / f"q{run.number:02d}.csv", run.columns, run.rows)

    def _cfg(self, label: str) -> tuple[str, str]:
        config = self.plan.config(label)
        return config.engine, str(config.spec)

    def _record(self, label: str, block: int, trial: int, test: str, step: str,
                values: list[tuple[str, float, str]]) -> None:
        self.rundir.append(Measurement(self.run_id, block, trial, label, *self._cfg(label), "tpch", test, step,
                                       metric, value, unit) for metric, value, unit in values)

    # ------------------------------------------------------------------------------------------
    def _check_answers(self) -> None:
        plain_of = {}
        for config in self.plan.configs:
            twins = [c.label for c in self.plan.configs if c.engine == config.engine and c.spec.is_plain]
            plain_of[config.label] = twins[0] if twins else None
        verdicts = answer_verdicts(self.answer_sets, plain_of, load_reference(self.plan.sf), self.plan.sf)
        for label, verdict in verdicts.items():
            self.verification["configs"].setdefault(label, {})["answers"] = verdict
            if verdict["answers_equal"] is False:
                detail = (verdict.get("plain_mismatches") or verdict.get("reference_mismatches") or ["?"])[0]
                self.outcome.problems.append(f"answers of {label} differ: {detail}")
            self.verification["configs"][label]["answers_equal"] = verdict["answers_equal"]
        self._write_verification()

    def _write_verification(self) -> None:
        self.rundir.write_verification(self.verification)

    def _start_manifest(self, data_dir: Path, data_facts: dict[str, Any]) -> None:
        self.manifest = {
            "tool": {"name": "tdebench", "version": __version__},
            "run_id": self.run_id,
            "command_line": [redact(a) for a in self.command_line],
            "created_at": utc_now(),
            "status": "running",
            "host": host_facts(self.rundir.path),
            "plan": self.plan.to_json(),
            "data": {**data_facts, "dir": str(data_dir)},
            "configs": [],
        }
        self.rundir.write_manifest(self.manifest)

    def _finish_manifest(self, status: str) -> None:
        self.manifest.update(status=status, finished_at=utc_now(), problems=self.outcome.problems,
                             failed_steps=self.outcome.failed_steps)
        self.rundir.write_manifest(self.manifest)
