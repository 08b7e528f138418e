"""`tdebench run`: build the plan from options, execute it, summarize, report."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from tdebench.encryption import parse_spec_list
from tdebench.engines import get_engine
from tdebench.engines.base import Config
from tdebench.errors import UsageError
from tdebench.results.rundir import RunDirectory
from tdebench.runner.orchestrator import Orchestrator
from tdebench.runner.plan import RunPlan


def build_plan(engine_name: str, encryption: str | None, sf: float, trials: int, warmup: int,
               settings: dict[str, str], seed: int | None, keep_answers: bool, data_dir: Path | None,
               tcp: bool, keep: bool) -> RunPlan:
    """Validate every option and spec before any work starts."""
    engine = get_engine(engine_name)
    specs = parse_spec_list(encryption) if encryption else None
    if specs is None:
        specs = [spec for spec in engine.supported_specs() if spec.is_plain] + [engine.default_encrypted_spec()]
    for spec in specs:
        engine.validate_spec(spec)
    merged = {**engine.default_settings(), **settings}
    engine.validate_settings(merged)
    configs = [Config(engine.name, spec, dict(merged), tcp=tcp, keep=keep) for spec in specs]
    extra = {"seed": seed} if seed is not None else {}
    return RunPlan(configs=configs, sf=sf, trials=trials, warmup_trials=warmup, keep_answers=keep_answers,
                   data_dir=data_dir, **extra)


def execute_run(*, engine: str, encryption: str | None, sf: float, trials: int, warmup: int, out_dir: Path | None,
                keep_answers: bool, data_dir: Path | None, settings: dict[str, str], seed: int | None,
                work_dir: Path | None, tcp: bool, keep: bool, report: bool, console: Console,
                err_console: Console) -> int:
    """Run and return the exit code: 0 all good, 1 failures or differing answers."""
    from tdebench.cli.app import default_out_dir
    from tdebench.cli.summary import print_summary
    from tdebench.cli.ui import RichListener

    plan = build_plan(engine, encryption, sf, trials, warmup, settings, seed, keep_answers, data_dir, tcp, keep)
    rundir = RunDirectory.create(out_dir or default_out_dir(engine))
    console.print(f"tdebench: {', '.join(plan.labels)} · TPC-H SF {plan.sf:g} · {plan.trials} trials "
                  f"(+{plan.warmup_trials} warm-up) → {rundir.path}")
    with RichListener(err_console) as listener:
        outcome = Orchestrator(plan, rundir, listener, work_root=work_dir).execute()
    print_summary(rundir.path, console)
    if report:
        path = build_report_for(rundir.path, err_console)
        if path is not None:
            console.print(f"report: {path}")
    for problem in outcome.problems:
        err_console.print(f"tdebench: PROBLEM: {problem}", markup=False)
    for step in outcome.failed_steps:
        err_console.print(f"tdebench: FAILED: {step}", markup=False)
    console.print(f"results: {rundir.path}")
    return 0 if outcome.ok else 1


def check_run_dir(run_dir: Path) -> None:
    """UsageError unless ``run_dir`` holds a manifest and measurements."""
    if not (run_dir / "manifest.json").is_file() or not (run_dir / "measurements.csv").is_file():
        raise UsageError(f"{run_dir} is not a tdebench run directory (no manifest.json/measurements.csv)",
                         "pass the --out directory of a tdebench run")


def build_report_for(run_dir: Path, err_console: Console) -> Path | None:
    """Build the report if the report package is present; a report failure never loses results."""
    try:
        from tdebench.report import build_report  # type: ignore[attr-defined]
    except ImportError:
        return None
    try:
        return build_report(run_dir)
    except Exception as exc:  # noqa: BLE001 - the measurements are safe; say what went wrong
        err_console.print(f"tdebench: report could not be built: {type(exc).__name__}: {exc}", markup=False)
        return None
