"""The ``tdebench`` command line. Only this package turns errors into exit codes."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import sys
import threading
import traceback
from datetime import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from tdebench import __version__
from tdebench.encryption import redact
from tdebench.cli.run_args import RunArgs
from tdebench.cli.pairs import parse_settings as _parse_settings
from tdebench.cli.run_args import signature as run_signature
from tdebench.cli.terminal import help_layout, keep_brackets, piped_width
from tdebench.engines import DEFAULT_ENGINE
from tdebench.errors import EnvironmentProblem, RunFailed, TdebenchError, UsageError

app = typer.Typer(
    name="tdebench", add_completion=False, no_args_is_help=False, pretty_exceptions_enable=False,
    help="Measure what encryption at rest costs a database, and prove the data is really encrypted.",
)
# piped output (CI logs, files) gets the terminal's width (COLUMNS) or room for the tables, not rich's 80 columns
out = Console(width=piped_width(sys.stdout, 140))
err = Console(stderr=True, width=piped_width(sys.stderr, 140))
_DEBUG = False
_SIGNALS = 0  # termination signals received; the 2nd and 3rd do not interrupt the clean-up
_SAID_INTERRUPTED = False  # the interrupt line was printed by the command itself


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context,
          version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False) -> None:
    if version:
        out.print(f"tdebench {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        ctx.invoke(run_command, ctx=ctx)


def _workload_options(items: list[str], **named: object) -> dict[str, object]:
    """Named workload flags plus --workload-option KEY=VALUE pairs (validated by the workload)."""
    options = {k: v for k, v in named.items() if v is not None}
    for key, value in _parse_settings(items, "--workload-option", "warehouses=2").items():
        options[key] = value
    return options


def _absolute(path: Path | None) -> str | None:
    """A path option as an absolute path (the manifest records it, so a resumed run finds it from anywhere)."""
    return str(path.resolve()) if path is not None else None


def _words(text: str | None) -> list[str] | None:
    """``power,throughput`` -> ["power", "throughput"]; None stays None (not given)."""
    return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


def _given(ctx: typer.Context, name: str) -> bool:
    """True when option ``name`` was typed on the command line (it then overrides the experiment file)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def run_command(ctx: typer.Context, **given: Any) -> None:
    """Compare twin configurations on TPC-H (default: SQLite vs SQLCipher, SF 0.01, 3 trials)."""
    from tdebench.cli import run as runner

    a = RunArgs(**given)
    if a.resume is not None:
        with _said_if_interrupted():
            code = runner.resume_run(a.resume, work_dir=a.work_dir, report=a.report, console=out, err_console=err,
                                     disk_check=not a.skip_disk_check)
        raise typer.Exit(code)
    plan, target = _plan_from_file(ctx, a) if a.experiment is not None else _plan_from_flags(ctx, a)
    target = target or default_out_dir("-".join(sorted({c.engine for c in plan.configs})))
    with _said_if_interrupted():
        code = runner.start_run(plan, target, work_dir=a.work_dir, report=a.report, console=out, err_console=err,
                                disk_check=not a.skip_disk_check)
    raise typer.Exit(code)


# typer reads a command's options from its signature: here the fields of RunArgs
run_command.__signature__ = run_signature(typer.Context)  # type: ignore[attr-defined]
app.command("run")(run_command)


def _flag_options(a: RunArgs, **extra: object) -> dict[str, object]:
    """The workload options given as their own flags (and ``extra``) or as --workload-option."""
    return _workload_options(a.option, warehouses=a.warehouses, vus=a.vus, duration=a.duration, rampup=a.rampup,
                             slice=a.slice_, rows=a.rows, batches=a.batches, **extra)


def _plan_from_file(ctx: typer.Context, a: RunArgs) -> tuple[Any, Path | None]:
    """The plan of an experiment file, with the options typed on the command line over its [run] keys."""
    from tdebench.cli import run as runner

    overrides = {name: value for name, value in (
        ("sf", a.sf), ("tests", _words(a.tests)), ("streams", a.streams),
        ("trials", a.trials), ("warmup", a.warmup), ("cache", a.cache), ("reset", a.reset),
        ("query_timeout", a.query_timeout), ("max_failures", a.max_failures), ("seed", a.seed),
        ("keep_answers", a.keep_answers), ("data_dir", str(a.data_dir) if a.data_dir else None), ("tcp", a.tcp),
        ("keep", a.keep), ("memory_ratio", a.memory_ratio), ("page_source", a.page_source), ("schedule", a.schedule), ("repeat", a.repeat),
        ("precision", a.precision), ("precision_metric", a.precision_metric), ("max_time", a.max_time), ("max_trials", a.max_trials), ("pin", a.pin),
        ("nice", a.nice), ("restart_twins", a.restart_twins), ("baseline", a.baseline), ("fault", a.fault),
        ("keys", a.keys), ("key_server", a.key_server)) if _given(ctx, name)}
    ignored = [f"--{n.replace('_', '-')}" for n in ("workload", "engine", "encryption", "server_setting",
                                                     "encrypt_columns", "target", "nodes") if _given(ctx, n)]
    if ignored:
        raise UsageError(f"{', '.join(ignored)} cannot be combined with an experiment file (its [run] and "
                         "[[engines]] say what runs)", f"edit {a.experiment} or leave {ignored[0]} out")
    flags = _flag_options(a)
    if flags:  # e.g. --warehouses 1 or --workload-option fetch_size=1000: over the file's [run.options]
        overrides["options"] = flags
    options = {k: str(v.resolve()) for k, v in (("dir", a.workload_dir), ("log", a.log)) if v is not None} or None
    plan, parsed = runner.load_plan_file(a.experiment, overrides, options)
    return plan, a.out_dir or (Path(parsed.run.out) if parsed.run.out else None)


def _cluster_nodes(engines: str, nodes: int) -> int:
    """``--nodes``: only for cluster engines (a :attr:`Engine.cluster_type`, so :attr:`Engine.cluster_nodes`)."""
    from tdebench.engines import engine_choices, get_engine

    clusters = [n for n in engine_choices() if get_engine(n).cluster_nodes]
    others = [n.strip() for n in engines.split(",") if n.strip() and not get_engine(n.strip()).cluster_nodes]
    if others:
        raise UsageError(f"--nodes applies to cluster engines only, not {', '.join(others)}",
                         f"use it with --engine {' or '.join(clusters)}, or leave it out")
    return nodes


def _plan_from_flags(ctx: typer.Context, a: RunArgs) -> tuple[Any, Path | None]:
    """The plan the command line describes: engines and specs, or --target servers."""
    from tdebench.cli import run as runner

    if a.workload_dir is not None:
        runner.check_flag_applies(a.workload, "dir", "--workload-dir")
    if a.slice_ is not None:
        runner.check_flag_applies(a.workload, "slice", "--slice")
    if a.log is not None:
        runner.check_flag_applies(a.workload, "log", "--log")
    options = {"sf": a.sf, "tests": _words(a.tests), "streams": a.streams,
               "trials": a.trials if _given(ctx, "trials") else None,
               "warmup": a.warmup if _given(ctx, "warmup") else None,
               "schedule": a.schedule, "repeat": a.repeat if a.repeat is not None else 1, "precision": a.precision,
               "precision_metric": a.precision_metric,
               "max_time": a.max_time, "max_trials": a.max_trials, "pin": a.pin, "nice": a.nice,
               "restart_twins": a.restart_twins, "fault": a.fault, "cache": a.cache, "reset": a.reset,
               "query_timeout": a.query_timeout, "max_failures": a.max_failures, "seed": a.seed,
               "keep_answers": a.keep_answers, "data_dir": str(a.data_dir) if a.data_dir else None, "tcp": a.tcp,
               "keep": a.keep, "memory_ratio": a.memory_ratio, "page_source": a.page_source, "workload": a.workload, "baseline": a.baseline,
               "keys": a.keys, "key_server": a.key_server,
               "options": _flag_options(a, dir=_absolute(a.workload_dir), log=_absolute(a.log))}
    if a.targets:
        if a.keys or a.key_server:
            raise UsageError("--keys and --key-server apply to servers tdebench starts, not to --target servers "
                             "(whose key management tdebench reports as it finds it)", "leave them out")
        if _given(ctx, "engine") or a.encryption or a.server_setting or a.encrypt_columns:
            raise UsageError("--target replaces --engine, --encryption, --server-setting and --encrypt-columns",
                             "declare each target's encryption in its URL, e.g. --target enc=mysql://u@h/db#tde:aes-256-cbc")
        return runner.plan_from_targets(a.targets, a.override_check, options), a.out_dir
    if a.override_check:
        raise UsageError("--override-encryption-check applies to --target only", "leave it out")
    settings = _parse_settings(a.server_setting)
    if a.encrypt_columns:
        settings["encrypt_columns"] = a.encrypt_columns
    if a.nodes is not None:
        settings["nodes"] = str(_cluster_nodes(a.engine, a.nodes))
    parsed = runner.experiment_from_options(a.engine, a.encryption, settings, options)
    return runner.plan_from_experiment(parsed), a.out_dir


@contextlib.contextmanager
def _said_if_interrupted() -> Iterator[None]:
    """An interrupted run says how to continue it, then exits 130 (typer turns a KeyboardInterrupt that leaves a
    command into exit 130 by itself, without a word)."""
    try:
        yield
    except KeyboardInterrupt as exc:
        run_dir = getattr(exc, "run_dir", None)
        resume = f"; continue it with: tdebench run --resume {run_dir}" if run_dir is not None else ""
        _fail(f"tdebench: interrupted; servers stopped and temporary data removed{resume}")
        global _SAID_INTERRUPTED
        _SAID_INTERRUPTED = True
        raise typer.Exit(130) from None


@app.command("verify")
def verify_command(
    engine: Annotated[str, typer.Option(help="Engine(s), comma-separated.")] = DEFAULT_ENGINE,
    encryption: Annotated[Optional[str], typer.Option(help="Comma-separated specs (default: none + engine default).")] = None,
    sf: Annotated[float, typer.Option(help="TPC-H scale factor of the data loaded for the check.")] = 0.01,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Run directory (default results/<time>-verify).")] = None,
    data_dir: Annotated[Optional[Path], typer.Option(help="Where TPC-H data is generated and cached.")] = None,
    server_setting: Annotated[list[str], typer.Option(help="KEY=VALUE engine setting; repeatable.")] = [],
    keys: Annotated[Optional[str], typer.Option(help="Key sources, as for run (file, openbao).")] = None,
    key_server: Annotated[Optional[str], typer.Option(help="Your own OpenBao/Vault KV v2 mount, as for run.")] = None,
) -> None:
    """Provision, load and verify encryption at rest (status query + canary scan + answers), without trials."""
    from tdebench.cli import run as runner
    from tdebench.results.rundir import RunDirectory
    from tdebench.runner.keyserver.servers import check_plan as check_key_servers

    options = {"sf": sf, "trials": 1, "warmup": 0, "data_dir": str(data_dir) if data_dir else None, "keys": keys,
               "key_server": key_server}
    plan = runner.plan_from_experiment(
        runner.experiment_from_options(engine, encryption, _parse_settings(server_setting), options))
    check_key_servers(plan)
    rundir = RunDirectory.create(out_dir or default_out_dir("verify"))
    raise typer.Exit(runner.verify_plan(plan, rundir, console=out, err_console=err))


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
        lines = engine.spec_notes()
        out.print(f"[bold]{name}[/bold]  {version}", highlight=False)
        for line in [*lines, f"default encrypted: {engine.default_encrypted_spec()}"]:
            out.print(f"  {line}", markup=False, highlight=False)


@app.command("report")
def report_command(run_dir: Annotated[Path, typer.Argument(help="A run directory, or a decision directory.")]) -> None:
    """(Re)build the report of a run directory (report/index.html, summary.md, CSV tables), or the page of a
    decision directory (tdebench decide)."""
    from tdebench.cli.run import check_run_dir
    from tdebench.decide import build_page, is_decision
    from tdebench.report import build_report

    if is_decision(run_dir):
        out.print(f"page: {build_page(run_dir)}")
        return
    check_run_dir(run_dir)
    try:
        path = build_report(run_dir)
    except (OSError, TdebenchError):
        raise
    except Exception as exc:  # noqa: BLE001 - the measurements are untouched; say so and fail
        raise RunFailed(f"the report of {run_dir} could not be built: {type(exc).__name__}: {exc}",
                        "the measurements are untouched; rerun with --debug for a traceback and report it") from exc
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


@app.command("cleanup")
def cleanup_command(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would be stopped and removed.")] = False,
) -> None:
    """Stop servers, end clients and helpers, unmount filesystems and delete directories that killed runs left
    behind."""
    from tdebench.runner import cleanup

    failed: list[str] = []
    for record in cleanup.live_runs():
        out.print(f"run {record.get('run_id')} (pid {record['owner']['pid']}) is still running: left alone",
                  markup=False, highlight=False)
    dead = cleanup.dead_runs()
    for path, record, found in dead:
        name = f"run {record.get('run_id')} (pid {record.get('owner', {}).get('pid')}, killed)"
        if dry_run:
            what = ([f"server {s['pid']} ({s.get('name')})" for s in found.servers]
                    + [f"process {p['pid']} ({p.get('name')})" for p in found.processes] + found.mounts
                    + found.loops + found.dirs + found.cgroups)
            out.print(f"{name} left: {'; '.join(what)}", markup=False, highlight=False)
            continue
        result = cleanup.clean_record(path, record)
        kept = f", kept {len(result.kept)} dir(s) (--keep)" if result.kept else ""
        out.print(f"{name}: stopped {result.stopped} server(s), ended {result.ended} other process(es), "
                  f"unmounted {result.unmounted}, removed "
                  f"{len(result.removed)} dir(s){kept}", markup=False, highlight=False)
        failed.extend(result.failed)
    stale = cleanup.stale_transient_dirs()
    for directory in stale:
        if dry_run:
            out.print(f"stale secret directory: {directory}", markup=False, highlight=False)
        else:
            cleanup.remove_tree(directory, failed)
    if stale and not dry_run:
        out.print(f"removed {len(stale)} stale secret director{'y' if len(stale) == 1 else 'ies'}", markup=False)
    if not dead and not stale:
        out.print("nothing to clean up")
    if failed:
        raise EnvironmentProblem(f"could not remove everything: {'; '.join(failed[:3])}",
                                 "stop what still uses those paths, then run `tdebench cleanup` again")


from tdebench.cli.ciphers import ciphers_command  # noqa: E402 - command modules import lazily inside
from tdebench.cli.manual import import_command, script_command, tde_setup_command  # noqa: E402

app.command("ciphers")(ciphers_command)
app.command("script")(script_command)
app.command("import")(import_command)
app.command("tde-setup")(tde_setup_command)
from tdebench.cli.capture import capture_command  # noqa: E402
from tdebench.cli.decide import decide_command  # noqa: E402
app.command("capture")(capture_command)
app.command("decide")(decide_command)


def quiet_library_logs() -> None:
    """Keep the libraries' own log records off the console, for every command: sqlglot warns with the text of a
    statement it cannot parse, and a statement read from a user's server may hold a password or customer data.
    (Python prints a warning nobody handles to stderr; a handler that drops them stops that.)"""
    root = logging.getLogger()
    if not any(isinstance(h, logging.NullHandler) for h in root.handlers):
        root.addHandler(logging.NullHandler())


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one-line errors, exit 2 for bad input, no traceback unless --debug."""
    global _DEBUG
    quiet_library_logs()
    args = list(sys.argv[1:] if argv is None else argv)
    _DEBUG = "--debug" in args
    args = [a for a in args if a != "--debug"]
    previous = _install_signal_handlers()
    try:
        try:
            layout = help_layout(app, sys.stdout)  # piped: plain help at the terminal's width, no word cut
            command = typer.main.get_command(app)  # inside: a signal while the commands are built is an interrupt
            keep_brackets(command, rich=not layout)
            code = command.main(args=args, prog_name="tdebench", standalone_mode=False, **layout)
            if code == 130 and _SIGNALS and not _SAID_INTERRUPTED:  # typer turned a KeyboardInterrupt into 130, unsaid
                raise KeyboardInterrupt("interrupted")
        except Exception as exc:  # noqa: BLE001 - click's own exceptions (typer may vendor click)
            if _SIGNALS:  # an error that follows an interrupt (a driver call cut short) is the interrupt
                raise KeyboardInterrupt(type(exc).__name__) from exc
            code = _click_exit_code(exc)
            if code is None:
                raise
    except KeyboardInterrupt as exc:
        from tdebench.cli.run import RunInterrupted

        run_dir = getattr(exc, "run_dir", None) or RunInterrupted.last_run_dir
        resume = f"; continue it with: {RunInterrupted.resume_command} {run_dir}" if run_dir is not None else ""
        _fail(f"tdebench: interrupted; servers stopped and temporary data removed{resume}")
        code = 130
    except TdebenchError as exc:
        if _DEBUG:
            _print_traceback()
        _fail(f"tdebench: error: {redact(exc.one_line())}")
        code = exc.exit_code
    except OSError as exc:  # a file system said no (full, read-only, permissions) outside the checks above
        if _DEBUG:
            _print_traceback()
        problem = _os_problem(exc)
        _fail(f"tdebench: error: {redact(problem.one_line())}")
        code = problem.exit_code
    except Exception as exc:  # noqa: BLE001 - last resort: one line, traceback only with --debug
        if _DEBUG:
            _print_traceback()
        _fail(f"tdebench: internal error: {type(exc).__name__}: {redact(str(exc))} (rerun with --debug for a traceback)")
        code = 1
    finally:
        _stop_everything(console_script=argv is None)
        if argv is not None:  # embedded use (tests): give the caller its handlers back
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    code = code if isinstance(code, int) else 0
    if argv is None and code == 130 and any(t.is_alive() and not t.daemon for t in threading.enumerate()
                                             if t is not threading.main_thread()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # worker threads of an interrupted trial must not keep the process alive
    sys.exit(code)


def _stop_everything(console_script: bool) -> None:
    """Last-resort clean-up: servers still running, other child processes, and what this run's ownership
    record still lists (a mount or directory an interrupted clean-up did not get to)."""
    from tdebench.engines.toolkit.process import stop_all

    stop_all(reap=console_script)
    try:
        from tdebench.runner.cleanup import clean_own_records

        clean_own_records()
    except Exception:  # noqa: BLE001 - `tdebench cleanup` can still do it later
        pass


def _os_problem(exc: OSError) -> TdebenchError:
    """A one-line error with a fix for an OSError: 3 for a full disk or I/O error, 2 for a path that cannot be used."""
    where = f" {exc.filename}" if exc.filename else ""
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return EnvironmentProblem(f"the disk is full writing{where} ({reason})",
                                  "free space there or choose another location (--out, --work-dir, --data-dir)")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EISDIR, errno.ENOENT):
        return UsageError(f"cannot use{where}: {reason}", "choose a path that exists and is writable")
    return EnvironmentProblem(f"file system error{' on' + where if where else ''}: {reason}",
                              "check the disk and the path, then try again")


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


def _print_traceback() -> None:
    """--debug: the traceback, with every key and password replaced by ***."""
    print(redact(traceback.format_exc()), file=sys.stderr, flush=True)


def _fail(line: str) -> None:
    """Errors are one plain line on stderr (never wrapped by rich)."""
    print(line.replace("\n", " | ") if not _DEBUG else line, file=sys.stderr, flush=True)


def _install_signal_handlers() -> dict[int, object]:
    """SIGINT, SIGTERM and SIGHUP interrupt the run once; servers are then stopped and data removed.
    Returns the handlers replaced."""
    global _SIGNALS, _SAID_INTERRUPTED
    from tdebench.engines.toolkit.process import clear_interrupt

    _SIGNALS, _SAID_INTERRUPTED = 0, False
    clear_interrupt()
    previous: dict[int, object] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        handler = signal.getsignal(sig)
        if handler is not signal.SIG_IGN:  # nohup and background jobs ignore some on purpose
            previous[sig] = handler
            signal.signal(sig, _terminate)
    return previous


def _terminate(signum: int, frame: object) -> None:
    """First signal: KeyboardInterrupt. 2nd and 3rd: ignored while cleaning up. 4th: give up cleaning up."""
    global _SIGNALS
    _SIGNALS += 1
    if _SIGNALS == 1:
        from tdebench.engines.toolkit import process

        process.interrupt()
    if _SIGNALS == 1 or _SIGNALS >= 4:
        raise KeyboardInterrupt
    print("tdebench: stopping servers and removing temporary data, please wait (interrupting this leaves them "
          "behind for `tdebench cleanup`)", file=sys.stderr, flush=True)


def default_out_dir(engine: str) -> Path:
    """results/<timestamp>-<engine> in the current directory."""
    return Path("results") / f"{datetime.now().strftime('%Y%m%dT%H%M%S')}-{engine}"
