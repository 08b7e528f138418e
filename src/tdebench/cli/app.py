"""The ``tdebench`` command line. Only this package turns errors into exit codes."""

from __future__ import annotations

import signal
import sys
import traceback
from datetime import datetime
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from tdebench import __version__
from tdebench.encryption import redact
from tdebench.errors import TdebenchError, UsageError

app = typer.Typer(
    name="tdebench", add_completion=False, no_args_is_help=False, pretty_exceptions_enable=False,
    help="Measure what encryption at rest costs a database, and prove the data is really encrypted.",
)
# piped output (CI logs, files) gets room for the tables instead of rich's 80-column default
out = Console() if sys.stdout.isatty() else Console(width=140)
err = Console(stderr=True) if sys.stderr.isatty() else Console(stderr=True, width=140)
_DEBUG = False


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context,
          version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False) -> None:
    if version:
        out.print(f"tdebench {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        ctx.invoke(run_command)


def _parse_settings(items: list[str]) -> dict[str, str]:
    settings: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bad --server-setting '{item}'", "write KEY=VALUE, e.g. --server-setting page_size=8192")
        settings[key.strip().lower()] = value.strip()
    return settings


def _workload_options(items: list[str], **named: object) -> dict[str, object]:
    """Named workload flags plus --workload-option KEY=VALUE pairs (validated by the workload)."""
    options = {k: v for k, v in named.items() if v is not None}
    for key, value in _parse_settings(items).items():
        options[key] = value
    return options


@app.command("run")
def run_command(
    experiment: Annotated[Optional[Path], typer.Argument(
        help="Experiment file (TOML); its [run] keys are the options below.", show_default=False)] = None,
    engine: Annotated[str, typer.Option(help="Engine(s), comma-separated: sqlite (default), mariadb, postgres.")] = "sqlite",
    encryption: Annotated[Optional[str], typer.Option(
        help="Comma-separated encryption specs; default: none plus each engine's default encrypted spec.")] = None,
    workload: Annotated[str, typer.Option(help="Workload: tpch (default), tpcc, sysbench, crud, load, backup.")] = "tpch",
    sf: Annotated[float, typer.Option(help="TPC-H scale factor.")] = 0.01,
    tests: Annotated[str, typer.Option(help="TPC-H tests: power, throughput or power,throughput.")] = "power",
    streams: Annotated[Optional[int], typer.Option(help="Throughput streams (default: spec minimum, at least 2).")] = None,
    trials: Annotated[int, typer.Option(help="Measured trials per config (after the warm-up).")] = 3,
    warmup: Annotated[int, typer.Option(help="Warm-up trials per config, discarded (0 or 1).")] = 1,
    cache: Annotated[str, typer.Option(help="warm, or cold: restart the server and drop the OS page cache before each trial.")] = "warm",
    reset: Annotated[str, typer.Option(help="none, or snapshot: restore the loaded data before every trial.")] = "none",
    query_timeout: Annotated[float, typer.Option(help="Cancel a query after this many seconds (0 = never).")] = 0.0,
    max_failures: Annotated[int, typer.Option(help="Consecutive failed trials before a config is abandoned.")] = 3,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Run directory (default results/<time>-<engine>).")] = None,
    resume: Annotated[Optional[Path], typer.Option(help="Continue a killed run in this run directory.")] = None,
    keep_answers: Annotated[bool, typer.Option(help="Write every config's query answers under answers/.")] = False,
    data_dir: Annotated[Optional[Path], typer.Option(help="Where TPC-H data is generated and cached.")] = None,
    server_setting: Annotated[list[str], typer.Option(help="KEY=VALUE engine setting, same for every twin; repeatable.")] = [],
    seed: Annotated[Optional[int], typer.Option(help="Seed of the randomized block order.")] = None,
    work_dir: Annotated[Optional[Path], typer.Option(help="Where instances keep their data (default: temp dir).")] = None,
    tcp: Annotated[bool, typer.Option(help="Servers also listen on 127.0.0.1 (default: Unix socket only).")] = False,
    keep: Annotated[bool, typer.Option(help="Keep instance data directories after the run.")] = False,
    report: Annotated[bool, typer.Option(help="Build the HTML/Markdown report at the end.")] = True,
    warehouses: Annotated[Optional[int], typer.Option(help="tpcc: warehouses.", show_default=False)] = None,
    vus: Annotated[Optional[str], typer.Option(help="tpcc/sysbench: virtual users per step, e.g. 5,10,15.", show_default=False)] = None,
    duration: Annotated[Optional[str], typer.Option(help="tpcc/sysbench: measured time per step, e.g. 30s, 5m.", show_default=False)] = None,
    rampup: Annotated[Optional[str], typer.Option(help="tpcc/sysbench: ramp-up before measuring, e.g. 5s.", show_default=False)] = None,
    rows: Annotated[Optional[int], typer.Option(help="crud: rows in the table.", show_default=False)] = None,
    batches: Annotated[Optional[str], typer.Option(help="crud: batch sizes, e.g. 100000,200000.", show_default=False)] = None,
    option: Annotated[list[str], typer.Option("--workload-option", help="KEY=VALUE option of the workload; repeatable.")] = [],
) -> None:
    """Compare twin configurations on TPC-H (default: SQLite vs SQLCipher, SF 0.01, 3 trials)."""
    from tdebench.cli import run as runner
    from tdebench.results.rundir import RunDirectory

    if resume is not None:
        raise typer.Exit(runner.resume_run(resume, work_dir=work_dir, report=report, console=out, err_console=err))
    if experiment is not None:
        plan, parsed = runner.load_plan_file(experiment)
        target = out_dir or (Path(parsed.run.out) if parsed.run.out else None)
    else:
        options = {"sf": sf, "tests": [t.strip() for t in tests.split(",") if t.strip()], "streams": streams,
                   "trials": trials, "warmup": warmup, "cache": cache, "reset": reset, "query_timeout": query_timeout,
                   "max_failures": max_failures, "seed": seed, "keep_answers": keep_answers,
                   "data_dir": str(data_dir) if data_dir else None, "tcp": tcp, "keep": keep,
                   "workload": workload, "options": _workload_options(option, warehouses=warehouses, vus=vus,
                                                                      duration=duration, rampup=rampup, rows=rows,
                                                                      batches=batches)}
        parsed = runner.experiment_from_options(engine, encryption, _parse_settings(server_setting), options)
        plan = runner.plan_from_experiment(parsed)
        target = out_dir
    rundir = RunDirectory.create(target or default_out_dir("-".join(sorted({c.engine for c in plan.configs}))))
    raise typer.Exit(runner.execute_plan(plan, rundir, work_dir=work_dir, report=report, console=out, err_console=err))


@app.command("engines")
def engines_command() -> None:
    """List the engines, their versions here and the encryption specs each supports."""
    from tdebench.engines import engine_names, get_engine

    for name in engine_names():
        engine = get_engine(name)
        try:
            engine.check_available()
            version = engine.version()
        except TdebenchError as exc:
            version = f"not available: {exc.one_line()}"
        specs = ", ".join(str(s) for s in engine.supported_specs())
        out.print(f"[bold]{name}[/bold]  {version}\n  specs: {specs}\n  default encrypted: {engine.default_encrypted_spec()}")


@app.command("report")
def report_command(run_dir: Annotated[Path, typer.Argument(help="A run directory.")]) -> None:
    """(Re)build the report of a run directory: report/index.html, summary.md, CSV tables."""
    from tdebench.cli.run import build_report_for, check_run_dir

    check_run_dir(run_dir)
    path = build_report_for(run_dir, err)
    if path is not None:
        out.print(f"report: {path}")


@app.command("compare")
def compare_command(
    baseline: Annotated[Path, typer.Argument(help="Run directory used as the baseline.")],
    other: Annotated[Path, typer.Argument(help="Run directory compared with it.")],
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Where to write the comparison report.")] = None,
) -> None:
    """The same statistics between two runs (e.g. two server versions); configs matched by label."""
    from tdebench.cli.run import check_run_dir
    from tdebench.report import compare_runs

    check_run_dir(baseline)
    check_run_dir(other)
    target = out_dir or other / "compare"
    out.print(f"comparison: {compare_runs(baseline, other, target)}")


from tdebench.cli.ciphers import ciphers_command  # noqa: E402 - command modules import lazily inside
from tdebench.cli.manual import import_command, script_command, tde_setup_command  # noqa: E402

app.command("ciphers")(ciphers_command)
app.command("script")(script_command)
app.command("import")(import_command)
app.command("tde-setup")(tde_setup_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one-line errors, exit 2 for bad input, no traceback unless --debug."""
    global _DEBUG
    args = list(sys.argv[1:] if argv is None else argv)
    _DEBUG = "--debug" in args
    args = [a for a in args if a != "--debug"]
    signal.signal(signal.SIGTERM, _terminate)
    command = typer.main.get_command(app)
    try:
        try:
            code = command.main(args=args, prog_name="tdebench", standalone_mode=False)
        except Exception as exc:  # noqa: BLE001 - click's own exceptions (typer may vendor click)
            code = _click_exit_code(exc)
            if code is None:
                raise
    except KeyboardInterrupt:
        _fail("tdebench: interrupted; servers stopped and temporary data removed")
        code = 130
    except TdebenchError as exc:
        if _DEBUG:
            traceback.print_exc()
        _fail(f"tdebench: error: {redact(exc.one_line())}")
        code = exc.exit_code
    except Exception as exc:  # noqa: BLE001 - last resort: one line, traceback only with --debug
        if _DEBUG:
            traceback.print_exc()
        _fail(f"tdebench: internal error: {type(exc).__name__}: {redact(str(exc))} (rerun with --debug for a traceback)")
        code = 1
    finally:
        from tdebench.engines.process import stop_all

        stop_all()
    sys.exit(code if isinstance(code, int) else 0)


def _click_exit_code(exc: Exception) -> int | None:
    """Exit code for click's Exit/UsageError/Abort (matched by class name: typer may vendor click)."""
    if isinstance(exc, TdebenchError):
        return None
    kinds = {cls.__name__ for cls in type(exc).__mro__}
    if "Exit" in kinds:
        return int(getattr(exc, "exit_code", 0))
    if "UsageError" in kinds:
        ctx = getattr(exc, "ctx", None)
        command = ctx.command_path if ctx is not None else "tdebench"
        _fail(f"tdebench: error: {exc.format_message()}; see '{command} --help'")  # type: ignore[attr-defined]
        return 2
    if "Abort" in kinds:
        _fail("tdebench: interrupted")
        return 130
    return None


def _fail(line: str) -> None:
    """Errors are one plain line on stderr (never wrapped by rich)."""
    print(line.replace("\n", " | ") if not _DEBUG else line, file=sys.stderr, flush=True)


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def default_out_dir(engine: str) -> Path:
    """results/<timestamp>-<engine> in the current directory."""
    return Path("results") / f"{datetime.now().strftime('%Y%m%dT%H%M%S')}-{engine}"
