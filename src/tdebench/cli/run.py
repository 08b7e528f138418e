"""`tdebench run`: build the plan from an experiment file or options, execute it, summarize, report."""

from __future__ import annotations

import csv
import math
import os
import re
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from tdebench.cli import key_sources
from tdebench.cli.disk_defaults import Given, said as said_defaults, with_disk_defaults
from tdebench.config import Experiment, load_experiment, validate_experiment
from tdebench.encryption import EncryptionSpec, check_repeats, parse_spec, redact
from tdebench.engines import get_engine
from tdebench.api.engine import Config
from tdebench.api.manifest import new_manifest
from tdebench.errors import UsageError
from tdebench.api.measurement import ONE_OFF_TESTS, OPTIONAL_COLUMNS
from tdebench.results.rundir import COLUMNS, RunDirectory
from tdebench.api.plan import RunPlan, plan_from_json


def experiment_from_options(engines: str, encryption: str | None, settings: dict[str, str],
                            run: dict[str, Any]) -> Experiment:
    """Flags in the experiment-file vocabulary: each spec goes to every listed engine that supports it, a spec
    written ``ENGINE/SPEC`` (e.g. ``sqlite/fs:fscrypt``) to that engine only."""
    names = [n.strip() for n in engines.split(",") if n.strip()]
    if not names:
        raise UsageError("empty --engine", "name at least one engine, e.g. --engine sqlite")
    items = split_engine_specs(encryption, names) if encryption else None
    sections = []
    for name in names:
        engine = get_engine(name)
        if items is None:
            mine = ["none", str(engine.default_encrypted_spec())]
        else:
            mine = [str(s) for owner, s in items if owner == name or (owner is None and engine.supports(s))]
            for owner, spec in items:
                if owner == name or (owner is None and len(names) == 1):
                    _refuse_other_engines_spec(name, spec, names)
                    engine.validate_spec(spec)
        sections.append({"name": name, "encryption": mine, "settings": settings})
    if items is not None and len(names) > 1:
        for owner, spec in items:
            if owner is None and not any(get_engine(n).supports(spec) for n in names):
                raise UsageError(f"no listed engine supports encryption '{spec}'", "run `tdebench engines` for the specs each supports")
    return validate_experiment({"run": {k: v for k, v in run.items() if v is not None}, "engines": sections},
                               "command line")


def _refuse_other_engines_spec(name: str, spec: EncryptionSpec, names: list[str]) -> None:
    """UsageError naming the engine of the same SQL family that has ``spec`` when ``name`` lacks it (e.g.
    sqlite3mc:chacha20 on sqlite)."""
    from tdebench.engines import engine_names

    if get_engine(name).supports(spec):
        return
    family = get_engine(name).dialect.family  # another SQL engine would compare engines, not only encryption
    others = [n for n in engine_names() if n not in names and get_engine(n).dialect.family == family
              and get_engine(n).supports(spec)]
    if others:
        raise UsageError(f"engine '{name}' does not support encryption '{spec}', which is engine {others[0]}'s",
                         f"compare across engines with --engine {','.join(names)},{others[0]} --baseline {name}-none "
                         "(each engine keeps its own plain twin; docs/experiments.md)")


def split_engine_specs(text: str, engines: list[str]) -> list[tuple[str | None, EncryptionSpec]]:
    """``--encryption`` items as (engine or None, spec): ``sqlite3mc/none`` names its engine, which must be one
    of ``--engine``'s; repeated encrypted specs of one engine are refused."""
    out: list[tuple[str | None, EncryptionSpec]] = []
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        owner, sep, spec = item.partition("/")
        if not sep:
            out.append((None, parse_spec(item)))
            continue
        if owner.strip() not in engines:
            raise UsageError(f"'{item}' names engine '{owner.strip()}', which --engine does not list",
                             f"add it to --engine ({','.join(engines)},{owner.strip()}) or write the spec alone")
        out.append((owner.strip(), parse_spec(spec.strip())))
    if not out:
        raise UsageError("empty --encryption list", "give at least one spec, e.g. none,sqlcipher:aes-256-cbc")
    for name in engines:
        check_repeats([s for owner, s in out if owner in (name, None)])
    return out


# run-level keys that are really options of the workloads reading TPC-H data
WORKLOAD_KEYS = ("sf", "tests", "streams")


def check_flag_applies(workload: str, key: str, flag: str) -> None:
    """UsageError when a workload's named flag (e.g. --workload-dir for ``dir``) is given with another workload."""
    from tdebench.workloads import options_model, workload_names

    if key not in options_model(workload).model_fields:
        takers = [w for w in workload_names() if key in options_model(w).model_fields]
        raise UsageError(f"{flag} does not apply to --workload {workload}",
                         f"leave it out, or use --workload {' or '.join(takers)}")


def workload_options(experiment: Experiment) -> dict[str, Any]:
    """The workload's options: ``[run.options]`` plus ``sf``/``tests``/``streams`` where given, checked by the
    workload's own model (UsageError for an option it does not take)."""
    from tdebench.workloads import check_workload_options, options_model

    r = experiment.run
    options = dict(r.options)
    fields = options_model(r.workload).model_fields
    for key in WORKLOAD_KEYS:
        value = getattr(r, key)
        if value is None:
            continue
        if key not in fields:
            raise UsageError(f"--{key} does not apply to --workload {r.workload}",
                             f"leave it out (it is an option of the workloads that read TPC-H data: tpch"
                             f"{', load, backup' if key == 'sf' else ''})")
        options.setdefault(key, value)
    parsed = check_workload_options(r.workload, options)
    for key in parsed.path_options:  # recorded absolute, so a resumed run finds it from any directory
        if isinstance(options.get(key), str):
            options[key] = str(Path(options[key]).resolve())
    return options


def plan_from_experiment(experiment: Experiment) -> RunPlan:
    """Validate engines, specs, settings and workload options of an experiment before any work starts."""
    configs: list[Config] = []
    r = experiment.run
    if r.sf is not None and not math.isfinite(r.sf):
        raise UsageError(f"bad value {r.sf} for the scale factor", "give a finite number > 0, e.g. --sf 0.01")
    stopping = stopping_options(r)
    sources = key_sources.sources_of(r.keys)
    options = workload_options(experiment)
    every_spec = [parse_spec(t) for section in experiment.engines for t in section.encryption]
    for section in experiment.engines:
        engine = get_engine(section.name)
        specs = [parse_spec(t) for t in section.encryption] or [parse_spec("none"), engine.default_encrypted_spec()]
        check_repeats(specs)
        for spec in specs:
            engine.validate_spec(spec)
        given = {k.lower(): str(v).lower() if isinstance(v, bool) else str(v) for k, v in section.settings.items()}
        # settings the plan as a whole calls for (an fscrypt spec of any engine puts every twin of the run on an
        # ext4 image: configs compared across engines then share the filesystem too)
        merged = {**engine.default_settings(), **engine.plan_settings(specs + every_spec), **given}
        engine.validate_settings(merged)
        variant = engine.variant(merged)  # e.g. galera transport=tls: galera-none-tls
        for spec, name in zip(specs, twin_names(engine.name, specs)):
            config = Config(engine.name, spec, dict(merged), tcp=r.tcp, keep=r.keep,
                            name=name or (f"{engine.name}-{spec.label}-{variant}" if variant else ""))
            configs.extend(key_sources.cross(engine, config, sources))  # --keys file,openbao
    key_sources.check_sources(configs, sources, r.key_server)
    check_workload_plan(r.workload, options, configs, r.reset)
    extra = {"seed": r.seed} if r.seed is not None else {}
    plan = RunPlan(configs=configs, warmup_trials=1 if r.warmup is None else r.warmup, keep_answers=r.keep_answers,
                   data_dir=Path(r.data_dir) if r.data_dir else None, cache=r.cache, reset=r.reset,
                   query_timeout=r.query_timeout, max_failures=r.max_failures, workload=r.workload,
                   workload_options=options, memory_ratios=tuple(r.memory_ratio or ()), baseline=r.baseline,
                   page_source=r.page_source or "", key_server=r.key_server, **stopping, **extra)
    given = Given(schedule=r.schedule is not None, pin=r.pin is not None, warmup=r.warmup is not None,
                  precision_metric=r.precision_metric is not None)
    return with_disk_defaults(plan, given)


def twin_names(engine: str, specs: list[EncryptionSpec]) -> list[str]:
    """Labels for repeated specs (an A/A test): the second ``none`` of mariadb is ``mariadb-none-2``; "" keeps
    the default label ``<engine>-<spec>``."""
    seen: dict[EncryptionSpec, int] = {}
    out = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        out.append(f"{engine}-{spec.label}-{seen[spec]}" if seen[spec] > 1 else "")
    return out


DEFAULT_SCHEDULE = "query"  # measured with benchmarks/precision.py: docs/precision.md


def stopping_options(r: Any) -> dict[str, Any]:
    """Trials, schedule and the precision options of a [run] section as RunPlan arguments (UsageError naming
    the fix for a bad value, before any work)."""
    from tdebench.stats.sequential import DEFAULT_MIN_N, parse_precision

    precision = None if r.precision is None else parse_precision(str(r.precision))
    max_time = None if r.max_time is None else parse_max_time(r.max_time)
    whole = r.cache == "cold" or r.fault  # a fault's rejoin must not run during the twins' slices
    schedule = r.schedule if r.schedule is not None else ("block" if whole else DEFAULT_SCHEDULE)
    # with --precision, --trials is the stopping rule's pilot: the same for every workload, since the rule
    # counts blocks, however many paired rounds a block holds (docs/precision-statistics.md)
    trials = r.trials if r.trials is not None else (DEFAULT_MIN_N if precision is not None else 3)
    return {"trials": trials, "schedule": schedule, "repeat": r.repeat, "precision": precision,
            "precision_metric": r.precision_metric or "headline",
            "max_time": max_time, "max_trials": r.max_trials, **pin_options(r), "nice": r.nice,
            "restart_twins": r.restart_twins, "fault": r.fault}


def pin_options(r: Any) -> dict[str, Any]:
    """``pin`` and why: as asked (``--pin``/``--no-pin``), else the workload's default (one CPU or none: off)."""
    from tdebench.workloads import workload_class

    if r.pin is not None:
        return {"pin": bool(r.pin), "pin_reason": "asked for (--pin)" if r.pin else "turned off (--no-pin)"}
    reason = workload_class(r.workload).pin_by_default(dict(r.options or {}))
    if reason is None or len(os.sched_getaffinity(0)) < 2:
        return {"pin": False, "pin_reason": ""}
    return {"pin": True, "pin_reason": reason}


_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*", re.I)
_UNIT_SECONDS = {"s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_max_time(value: object) -> float:
    """``20m``, ``90s``, ``1.5h`` or seconds -> seconds; UsageError for anything else (zero and negatives too)."""
    match = None if isinstance(value, bool) else _DURATION.fullmatch(str(value))
    seconds = float(match.group(1)) * _UNIT_SECONDS[(match.group(2) or "s").lower()] if match else math.nan
    if not seconds > 0:
        raise UsageError(f"--max-time {value!r} is not a positive duration",
                         "give the longest the run may take, e.g. --max-time 20m (units s, m, h)")
    return seconds


def check_workload_plan(workload: str, options: dict[str, Any], configs: list[Config], reset: str) -> None:
    """The workload's check that it can run on the plan's engines (their SQL families) and reset, before any work."""
    from tdebench.workloads import check_workload_options

    check_pairs(workload, sorted({c.engine for c in configs}))
    families = {get_engine(c.engine).dialect.family for c in configs}
    checked = check_workload_options(workload, options)
    checked.check_plan(families, reset)
    checked.check_configs(configs)


def check_pairs(workload: str, engines: list[str]) -> None:
    """UsageError naming the reason when the workload declares a need one of the engines lacks (its ``needs``),
    and the engines that have it."""
    from tdebench.engines import engine_names
    from tdebench.workloads import unmet_need

    for name in engines:
        engine = get_engine(name)
        reason = unmet_need(workload, engine)
        if reason is not None:
            able = [n for n in engine_names() if unmet_need(workload, get_engine(n)) is None]
            fix = ("use --engine " + " or ".join(filter(None, (", ".join(able[:-1]), able[-1]))) if able
                   else "no registered engine can run it")
            raise UsageError(f"--workload {workload} does not run on engine {name} ({engine.dialect.product}): {reason}",
                             fix)


def plan_from_targets(targets: list[str], overrides: list[str], run: dict[str, Any]) -> RunPlan:
    """A plan whose configs are external targets (``--target LABEL=URL[#SPEC]``), passwords resolved now."""
    from dataclasses import replace

    from tdebench.engines import TARGET_ENGINE
    from tdebench.engines.external.configs import check_run_options, target_configs

    experiment = experiment_from_options(TARGET_ENGINE, "none", {}, run)  # validates the run options as usual
    r = experiment.run
    check_run_options(r.cache, r.reset)
    plan = plan_from_experiment(experiment)  # what the workload needs of an engine is checked before any login
    configs = [replace(c, keep=r.keep) for c in target_configs(targets, overrides, reach=True)]
    return replace(plan, configs=configs)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C/SIGTERM during a run: the CLI says how to continue it."""

    # typer (0.2x) turns a KeyboardInterrupt inside a command into exit code 130 and drops the exception:
    # the CLI reads the run directory from here
    last_run_dir: Path | None = None
    #: how the CLI says to continue it (a decision continues its sub-runs: tdebench decide --resume)
    resume_command: str = "tdebench run --resume"

    def __init__(self, run_dir: Path) -> None:
        super().__init__(str(run_dir))
        self.run_dir = run_dir
        RunInterrupted.last_run_dir = run_dir


def start_run(plan: RunPlan, target: Path, *, work_dir: Path | None, report: bool, console: Console,
              err_console: Console, disk_check: bool = True) -> int:
    """Create the run directory with a first manifest (so that even an early interrupt is resumable), warn
    about leftovers of killed runs, and execute the plan."""
    from tdebench.runner.cleanup import leftover_warning
    from tdebench.runner.duet import check_plan as check_duet
    from tdebench.runner.faults import check_plan as check_fault
    from tdebench.runner.memory import check_plan
    from tdebench.runner.precision import check_run_options

    from tdebench.runner.keyserver.servers import check_plan as check_key_servers

    check_run_options(plan)
    check_key_servers(plan)  # --keys openbao: bao installed, or the user's key server serving every key
    check_fault(plan)  # --fault: engines that declare it, a node that exists
    check_plan(plan)  # --memory-ratio: engines that can size their cache, and room for the largest ratio
    check_duet(plan)  # --schedule duet: two configs, two CPUs, steps, engines it can place, cgroups
    rundir = RunDirectory.create(target)
    rundir.write_manifest(new_manifest(rundir.path.name, plan.to_json(), [redact(a) for a in sys.argv]))
    warning = leftover_warning()
    if warning:
        print(warning, file=sys.stderr, flush=True)
    return execute_plan(plan, rundir, work_dir=work_dir, report=report, console=console, err_console=err_console,
                        disk_check=disk_check)


def completed_trials(rundir: RunDirectory) -> set[tuple[int, str]]:
    """(block, config) of every trial recorded as finished (ok or failed) in measurements.csv."""
    return {(int(r["block"]), r["config"]) for r in rundir.read_measurements()
            if _well_formed(r) and r["test"] == "trial" and r["metric"] == "completed"}


def _well_formed(row: dict[str, Any]) -> bool:
    """False for a row torn by a crash in the middle of an append (missing fields, no block number)."""
    if None in row or any(row.get(c) is None for c in COLUMNS if c not in OPTIONAL_COLUMNS):
        return False
    try:
        int(row["block"])
    except (TypeError, ValueError):
        return False
    return True


def mark_unfinished(rundir: RunDirectory, done: set[tuple[int, str]]) -> int:
    """Rows of trials in flight when the run died become status 'aborted'; load rows 'superseded' (reloaded)."""
    rows = [r for r in rundir.read_measurements() if _well_formed(r)]
    changed = 0
    for row in rows:
        if row["status"] in ("aborted", "superseded"):
            continue
        block = int(row["block"])
        if row["test"] in ONE_OFF_TESTS:
            row["status"], changed = "superseded", changed + 1
        elif (block, row["config"]) not in done:
            row["status"], changed = "aborted", changed + 1
    tmp = rundir.measurements_path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, restval="")  # an older file gains an empty round
        writer.writeheader()
        writer.writerows(rows)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, rundir.measurements_path)
    return changed


def _blocks_said(plan: RunPlan) -> str:
    """How many blocks the run measures: a fixed count, or (``--precision``) until the target, within its limits."""
    if plan.precision is None:
        return f"{plan.trials} trials"
    limits = [f"{plan.max_trials} blocks" if plan.max_trials else "",
              f"{plan.max_time / 60:g} min" if plan.max_time else ""]
    limit = " or ".join(x for x in limits if x)
    return f"blocks until ±{plan.precision:g}%" + (f" (at most {limit})" if limit else "")


def execute_plan(plan: RunPlan, rundir: RunDirectory, *, work_dir: Path | None, report: bool, console: Console,
                 err_console: Console, completed: set[tuple[int, str]] | None = None,
                 manifest: dict[str, Any] | None = None, disk_check: bool = True) -> int:
    """Run and return the exit code: 0 all good, 1 failures, abandoned configs or differing answers."""
    from tdebench.cli.summary import label_warnings
    from tdebench.cli.ui import RichListener
    from tdebench.runner.orchestrator import Orchestrator  # here: it imports SciPy (most of the CLI's start-up)

    orchestrator = Orchestrator(plan, rundir, work_root=work_dir, completed=completed, manifest=manifest,
                                disk_check=disk_check)
    console.print(f"tdebench: {', '.join(plan.labels)} · {orchestrator.workload.describe()} · {_blocks_said(plan)} "
                  f"(+{plan.warmup_trials} warm-up) · cache {plan.cache} → {rundir.path}")
    regime_line = said_defaults(plan)
    if regime_line:
        console.print(f"tdebench: {regime_line}", markup=False, soft_wrap=True)
    try:
        with RichListener(err_console) as listener:
            orchestrator.ui = listener
            outcome = orchestrator.execute()
    except RunInterrupted:
        raise
    except KeyboardInterrupt:
        raise RunInterrupted(rundir.path) from None  # after the last trial too: --resume then writes the report
    try:
        summarize_run(rundir.path, report=report, console=console, err_console=err_console)
    except KeyboardInterrupt:
        raise RunInterrupted(rundir.path) from None
    for line in [*(f"PROBLEM: {p}" for p in outcome.problems), *(f"FAILED: {s}" for s in outcome.failed_steps),
                 *(f"ABANDONED: {a}" for a in outcome.abandoned),
                 *(f"WARNING: {w}" for w in label_warnings(rundir.path))]:
        err_console.print(f"tdebench: {line}", markup=False, soft_wrap=True)
    console.print(f"results: {rundir.path}")
    # an overridden label is not a failure: the override was asked for, and every view marks the label
    return 0 if outcome.ok else 1


def summarize_run(run_dir: Path, *, report: bool, console: Console, err_console: Console) -> None:
    """The end of a run: the summary on the terminal, then the report (unless --no-report)."""
    from tdebench.cli.summary import print_summary
    from tdebench.report.model import summarize

    rs = summarize(run_dir)  # one analysis for the terminal and the report: the same figures in both
    print_summary(run_dir, console, rs)
    if report:
        path = build_report_for(run_dir, err_console, rs)
        if path is not None:
            console.print(f"report: {path}")


def finish_completed(run_dir: Path, *, report: bool, console: Console, err_console: Console) -> int:
    """--resume of a run whose trials are all measured: the report it lacks (missing, or cut short by the end
    of its process) is built with the summary, as at the end of a run; a complete one is only pointed to."""
    from tdebench.report import report_complete

    _clean_dead_instances_of(run_dir, err_console)
    if report_complete(run_dir):
        console.print(f"run {run_dir} is already completed and its report is complete: "
                      f"{run_dir / 'report' / 'index.html'}; to build it again: tdebench report {run_dir}",
                      markup=False, highlight=False, soft_wrap=True)
        return 0
    if not report:
        console.print(f"run {run_dir} is already completed; build its report with: tdebench report {run_dir}",
                      markup=False, highlight=False, soft_wrap=True)
        return 0
    check_writable(run_dir)
    console.print(f"run {run_dir} is completed but its report is missing or partial: building it",
                  markup=False, highlight=False, soft_wrap=True)
    summarize_run(run_dir, report=True, console=console, err_console=err_console)
    console.print(f"results: {run_dir}", markup=False, highlight=False)
    return 0


def resume_run(run_dir: Path, *, work_dir: Path | None, report: bool, console: Console, err_console: Console,
               disk_check: bool = True) -> int:
    """Continue a killed run: completed trials are kept, the trial in flight is redone."""
    check_run_dir(run_dir)
    rundir = RunDirectory(run_dir)
    try:
        manifest = rundir.read_manifest()
    except ValueError as exc:
        raise UsageError(f"{run_dir}/manifest.json is not valid JSON ({exc})",
                         "restore it from a backup; tdebench writes it atomically, so it was edited by hand") from None
    if manifest.get("status") == "completed":
        return finish_completed(run_dir, report=report, console=console, err_console=err_console)
    if not isinstance(manifest.get("plan"), dict):
        raise UsageError(f"{run_dir}/manifest.json has no plan", "this run cannot be resumed; start it again")
    check_writable(run_dir)
    _clean_dead_instances_of(run_dir, err_console)
    try:
        plan = plan_from_json(manifest["plan"])
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"the plan in {run_dir}/manifest.json is damaged ({type(exc).__name__}: {exc})",
                         "this run cannot be resumed; start it again") from None
    done = completed_trials(rundir)
    mark_unfinished(rundir, done)
    console.print(f"resuming {run_dir}: {len(done)} trial(s) already done")
    return execute_plan(plan, rundir, work_dir=work_dir, report=report, console=console, err_console=err_console,
                        completed=done, manifest=manifest, disk_check=disk_check)


def check_writable(run_dir: Path) -> None:
    """UsageError unless files can be created in ``run_dir`` (a read-only copy cannot be resumed)."""
    probe = run_dir / ".tdebench-write-test"
    try:
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"cannot write to the run directory {run_dir}: {exc.strerror or exc}",
                         "make it writable (or copy it somewhere writable) and resume that") from None


def _clean_dead_instances_of(run_dir: Path, err_console: Console) -> None:
    """Servers and directories that the killed process of this very run left behind go first."""
    from tdebench.runner.cleanup import clean_record, dead_runs

    for path, record, _ in dead_runs():
        if Path(record.get("run_dir", "/nonexistent")).resolve() == run_dir.resolve():
            result = clean_record(path, record)
            err_console.print(f"removed what the killed run left: {result.stopped} server(s) stopped, "
                              f"{result.ended} other process(es) ended, {result.unmounted} unmounted, "
                              f"{len(result.removed)} dir(s) removed", markup=False)


def check_run_dir(run_dir: Path) -> None:
    """UsageError unless ``run_dir`` holds a manifest and measurements."""
    if not (run_dir / "manifest.json").is_file() or not (run_dir / "measurements.csv").is_file():
        raise UsageError(f"{run_dir} is not a tdebench run directory (no manifest.json/measurements.csv)",
                         "pass the --out directory of a tdebench run")


def build_report_for(run_dir: Path, err_console: Console, rs: Any = None) -> Path | None:
    """Build the report (from ``rs``, the run's summary, when given); a report failure never loses results."""
    from tdebench.report import build_report, write_report

    try:
        return write_report(rs, run_dir / "report") if rs is not None else build_report(run_dir)
    except Exception as exc:  # noqa: BLE001 - the measurements are safe; say what went wrong
        err_console.print(f"tdebench: report could not be built: {type(exc).__name__}: {exc}", markup=False)
        return None


def load_plan_file(path: Path, overrides: dict[str, Any] | None = None,
                   options: dict[str, Any] | None = None) -> tuple[RunPlan, Experiment]:
    """An experiment file -> validated plan; options typed on the command line override the file's [run]
    (workload flags under ``overrides["options"]``, and ``options``, override single keys of its [run.options]).
    The workload's path options in the file are relative to the file."""
    try:
        experiment = load_experiment(path)
    except UnicodeDecodeError as exc:
        raise UsageError(f"experiment file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})",
                         "save it as UTF-8 TOML") from None
    experiment = _paths_relative_to(experiment, path.parent)
    if options and "dir" in options:
        check_flag_applies(experiment.run.workload, "dir", "--workload-dir")
    if overrides or options:
        data = experiment.model_dump()
        overrides = dict(overrides or {})
        flags = overrides.pop("options", {})
        data["run"].update(overrides)
        data["run"]["options"].update({**flags, **(options or {})})
        experiment = validate_experiment(data, "command line")
    return plan_from_experiment(experiment), experiment


def _paths_relative_to(experiment: Experiment, base: Path) -> Experiment:
    """The experiment with its workload's relative path options made relative to ``base`` (the file's dir)."""
    from tdebench.workloads import options_model

    keys = [k for k in options_model(experiment.run.workload).path_options
            if isinstance(experiment.run.options.get(k), str)]
    if not keys:
        return experiment
    data = experiment.model_dump()
    for key in keys:
        data["run"]["options"][key] = str((base / data["run"]["options"][key]).resolve())
    return validate_experiment(data, "experiment")


def verify_plan(plan: RunPlan, rundir: RunDirectory, *, console: Console, err_console: Console) -> int:
    """`tdebench verify`: every config provisioned, loaded and verified; 0 when every verdict holds."""
    import json

    from tdebench.cli.ui import RichListener
    from tdebench.errors import RunFailed
    from tdebench.runner.orchestrator import Orchestrator

    failed = None
    with RichListener(err_console) as listener:
        try:
            Orchestrator(plan, rundir, listener, verify_only=True).execute()
        except RunFailed as exc:
            failed = exc
    verification = json.loads(rundir.verification_path.read_text()) if rundir.verification_path.exists() else {}
    for label, entry in verification.get("configs", {}).items():
        verdict = "encrypted on disk" if entry.get("encrypted_on_disk") else "PLAINTEXT on disk"
        console.print(f"{label}: {verdict}; status enabled={entry.get('status', {}).get('enabled')}; "
                      f"{entry.get('marker_hits', '?')} canary hits in {entry.get('files_scanned', '?')} files; "
                      f"answers equal: {entry.get('answers_equal')}; check {'passed' if entry.get('passed') else 'FAILED'}")
    from tdebench.report.threats_view import text_lines

    for line in text_lines(verification):  # the threat model per config (docs/security.md)
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print(f"verification: {rundir.verification_path}")
    if failed is not None:
        raise failed
    path = build_report_for(rundir.path, err_console)
    if path is not None:
        console.print(f"report: {path}")
    return 0
