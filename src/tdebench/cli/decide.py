"""``tdebench decide``: every mechanism of an engine on the user's own workload, within a time budget, in one page
(docs/decide.md). The plan and the page are :mod:`tdebench.decide`'s; this module checks the request and every
sub-run's plan before any work, then runs the sub-runs one after the other as ``tdebench run`` does."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from tdebench.cli.pairs import parse_settings
from tdebench.errors import TdebenchError, UsageError

out = Console() if sys.stdout.isatty() else Console(width=160)
err = Console(stderr=True) if sys.stderr.isatty() else Console(stderr=True, width=140)


class _NoRunDir:
    """What a workload is given when it is only asked about itself (its headlines), before any run directory."""

    path = Path(".")

    def answers_dir(self, config_label: str) -> Path:
        raise RuntimeError("no run directory yet")


def decide_command(
    engine: Annotated[Optional[str], typer.Option(help="The engine to decide for (one), e.g. mariadb.",
                                                  show_default=False)] = None,
    workload_dir: Annotated[Optional[Path], typer.Option(
        help="Your workload: a --workload sql directory (docs/workloads/sql.md), written by hand or by tdebench "
             "capture.", show_default=False)] = None,
    mechanisms: Annotated[Optional[str], typer.Option(
        help="Mechanisms to compare, comma-separated: family names (tde, column, fscrypt, gocryptfs, ...) or specs "
             "(tde:aes-256-ctr) (default: one spec per way the engine can encrypt).", show_default=False)] = None,
    against: Annotated[Optional[str], typer.Option(
        help="Attackers the answer must stop, comma-separated: stolen-disk, stolen-datadir, redo-log, backups, "
             "host-root, logs, temp-files, swap, db-user, network, or any threat-model row id (default: "
             "stolen-disk).", show_default=False)] = None,
    budget: Annotated[str, typer.Option(help="The time the whole decision may take (s, m, h).")] = "45m",
    precision: Annotated[Optional[str], typer.Option(
        help="The cost run adds blocks until every headline's 95% CI half-width is at most this, e.g. 2%, within "
             "the budget (default: no target: blocks until the budget is used).", show_default=False)] = None,
    trials: Annotated[Optional[int], typer.Option(
        help="The cost run's blocks (fixed; still within the budget) (default: as many as the budget allows, at "
             "most 1000).", show_default=False)] = None,
    memory_ratio: Annotated[Optional[str], typer.Option(
        help="Regimes of the cost run: cache/data ratios, e.g. 2,0.25 (2: the data in memory; your server's "
             "buffer pool ÷ its data) (default: the cache as configured).", show_default=False)] = None,
    page_source: Annotated[Optional[str], typer.Option(help="With --memory-ratio: disk or memory (docs/memory.md).",
                                                       show_default=False)] = None,
    server_setting: Annotated[list[str], typer.Option(help="KEY=VALUE engine setting for every run; repeatable.")] = [],
    option: Annotated[list[str], typer.Option("--workload-option", help="KEY=VALUE option of the cost run's sql "
                                                                        "workload; repeatable.")] = [],
    switch_option: Annotated[list[str], typer.Option(help="KEY=VALUE option of the switching runs' encrypt workload "
                                                          "(docs/workloads/encrypt.md); repeatable.")] = [],
    switch_trials: Annotated[int, typer.Option(help="Trials of each switching run.")] = 3,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Decision directory (default "
                                                                  "results/<time>-decide-<engine>).")] = None,
    work_dir: Annotated[Optional[Path], typer.Option(help="Where instances keep their data (default: temp dir).")] = None,
    data_dir: Annotated[Optional[Path], typer.Option(help="Where the runs' input data are converted, generated and "
                                                          "cached (as tdebench run's).", show_default=False)] = None,
    resume: Annotated[Optional[Path], typer.Option(help="Continue a killed decision in this directory.")] = None,
) -> None:
    """Decide between encryption mechanisms on your own workload: cost, protection and switching, on one page."""
    if resume is not None:
        raise typer.Exit(continue_decision(resume, work_dir))
    if engine is None or workload_dir is None:
        raise UsageError("decide needs --engine and --workload-dir",
                         "e.g. tdebench decide --engine mariadb --workload-dir docs/examples/orders-sql")
    request, plan = check_request(engine, workload_dir, mechanisms, against, budget, precision, trials, memory_ratio,
                                  page_source, server_setting, option, switch_option, switch_trials, data_dir)
    from tdebench.decide.record import DecisionRecord
    from tdebench.encryption import redact

    target = out_dir or Path("results") / f"{time.strftime('%Y%m%dT%H%M%S')}-decide-{request['engine']}"
    record = DecisionRecord.create(target, request, plan.to_json(), [redact(a) for a in sys.argv])
    _interrupted(target)
    raise typer.Exit(run_decision(record, work_dir))


def _budget(text: str) -> float:
    from tdebench.workloads.tpcc.options import parse_duration

    try:
        seconds = parse_duration(text, "--budget")
    except ValueError as exc:
        raise UsageError(f"--budget {text!r}: {exc}", "give the time the decision may take, e.g. --budget 45m") from None
    if seconds <= 0:
        raise UsageError(f"--budget {text!r} is not a positive duration", "e.g. --budget 45m")
    return seconds


def check_request(engine_name: str, workload_dir: Path, mechanisms: str | None, against: str | None, budget: str,
                  precision: str | None, trials: int | None, memory_ratio: str | None, page_source: str | None,
                  server_setting: list[str], option: list[str], switch_option: list[str],
                  switch_trials: int, data_dir: Path | None = None) -> tuple[dict[str, Any], Any]:
    """Every input checked, and every sub-run's plan built and checked, before any work: (request, plan)."""
    from tdebench.api.regime import parse_ratios
    from tdebench.decide import attackers, mechanisms as mech, plan as dplan
    from tdebench.engines import engine_choices, get_engine
    from tdebench.stats.sequential import parse_precision

    if engine_name.strip().lower() not in engine_choices():
        raise UsageError(f"decide runs one engine it starts itself, not '{engine_name}'",
                         f"use one of: {', '.join(engine_choices())}")
    engine = get_engine(engine_name)
    specs = mech.choose(engine, mechanisms)
    chosen = attackers.parse_attackers(against)
    seconds = _budget(budget)
    if precision is not None:
        precision = f"{parse_precision(precision):g}%"
    if switch_trials < 1:
        raise UsageError("--switch-trials must be at least 1", "e.g. --switch-trials 3")
    ratios = parse_ratios(memory_ratio) if memory_ratio else ()
    settings = parse_settings(server_setting)
    cost = dplan.cost_run(specs, {**parse_settings(option, "--workload-option", "vus=2"),
                                  "dir": str(workload_dir.resolve())},
                          precision=precision, trials=trials, ratios=ratios, page_source=page_source)
    switch = dplan.switch_options(parse_settings(switch_option, "--switch-option", "steady=20s"))
    plan = dplan.build(engine, specs, cost, switch=switch, switch_trials=switch_trials,
                       backups=any(a.row == "backups" for a in chosen), budget_s=seconds,
                       data_dir=str(data_dir.resolve()) if data_dir else None)
    dplan.check_budget(plan)
    for sub in plan.runs:
        check_subrun(engine.name, sub, settings, max(seconds - plan.switching_floor_s, 1.0))
    request = {"engine": engine.name, "workload_dir": str(workload_dir.resolve()), "workload_name": workload_dir.name,
               "mechanisms": [str(s) for s in specs], "against": [a.to_json() for a in chosen], "budget_s": seconds,
               "precision": precision, "trials": trials, "memory_ratios": list(ratios), "page_source": page_source,
               "server_settings": settings, "switch_options": switch, "switch_trials": switch_trials}
    return request, plan


def run_plan(engine: str, sub: Any, settings: dict[str, str], max_time: float | None) -> Any:
    """The RunPlan of one sub-run (``max_time``: the cost run's share of the budget)."""
    from tdebench.cli import run as runner

    options = {**sub.run, "workload": sub.workload, "options": dict(sub.options)}
    if sub.role == "cost" and max_time is not None:
        options["max_time"] = max_time
    experiment = runner.experiment_from_options(engine, ",".join(sub.encryption), settings, options)
    return runner.plan_from_experiment(experiment)


def check_subrun(engine: str, sub: Any, settings: dict[str, str], max_time: float) -> None:
    """What ``tdebench run`` checks before its run directory exists, for one sub-run (UsageError naming it)."""
    from tdebench.runner.faults import check_plan as check_fault
    from tdebench.runner.memory import check_plan as check_memory
    from tdebench.runner.precision import check_run_options
    from tdebench.workloads import make_workload

    try:
        plan = run_plan(engine, sub, settings, max_time)
        if plan.precision is not None and not make_workload(plan, _NoRunDir()).headlines():
            raise UsageError(f"--precision: workload '{plan.workload}' declares no headline to target",
                             "leave --precision out (the cost run then takes as many blocks as the budget allows) "
                             "or give --trials N")
        check_run_options(plan)
        check_fault(plan)
        check_memory(plan)
    except UsageError as exc:
        raise UsageError(f"the {sub.role} run ({sub.workload}, {', '.join(sub.encryption)}): {exc.problem}",
                         exc.fix) from None


def _execute(record: Any, sub: Any, work_dir: Path | None, deadline: float) -> tuple[str, str, int | None]:
    """Run (or resume) one sub-run: (status, note, exit code); errors of the sub-run are its status, not the
    decision's end."""
    from tdebench.cli import run as runner

    request = record.request
    path = record.path / sub.name
    quiet = Console(file=io.StringIO(), width=160)  # its own summary is in its report; the page comes at the end
    try:
        if (path / "manifest.json").is_file():
            if _finished(path):  # it ended before the decision could record it
                return "completed", "", 0
            code = runner.resume_run(path, work_dir=work_dir, report=True, console=quiet, err_console=err)
        else:
            left = max(deadline - time.monotonic(), 1.0)
            plan = run_plan(request["engine"], sub, request.get("server_settings") or {}, left)
            code = runner.start_run(plan, path, work_dir=work_dir, report=True, console=quiet, err_console=err)
    except KeyboardInterrupt:
        raise
    except TdebenchError as exc:
        return "failed", exc.one_line(), exc.exit_code
    return ("completed" if code == 0 else "completed with failures"), "", code


def _finished(path: Path) -> bool:
    """Whether the run directory ``path`` says its run completed."""
    import json

    try:
        return json.loads((path / "manifest.json").read_text(encoding="utf-8")).get("status") == "completed"
    except (OSError, ValueError, AttributeError):
        return False


def run_decision(record: Any, work_dir: Path | None) -> int:
    """Every sub-run not completed yet, in the plan's order, then the page; the exit code (0: all went well)."""
    from tdebench.cli.run import RunInterrupted
    from tdebench.decide import load_decision, print_page, write_page
    from tdebench.decide.plan import REPORT_RESERVE_S, SubRun

    spent = sum(float(e.get("seconds") or 0) for e in (record.data.get("runs") or {}).values())
    deadline = time.monotonic() + float(record.request["budget_s"]) - spent - REPORT_RESERVE_S
    out.print(f"tdebench decide: {record.request['engine']} · {', '.join(record.request['mechanisms'])} · budget "
              f"{record.request['budget_s']:g} s → {record.path}")
    codes = []
    started = time.monotonic()
    for sub in [SubRun.from_json(r) for r in record.plan["runs"]]:
        if record.run_entry(sub.name).get("status", "").startswith("completed"):
            continue
        out.print(f"decide: {sub.role} run {sub.name} ({sub.workload}: {', '.join(sub.encryption)}) …")
        record.started(sub.name)
        t0 = time.monotonic()
        try:
            status, note, code = _execute(record, sub, work_dir, deadline)
        except KeyboardInterrupt:
            record.finished(sub.name, "interrupted", time.monotonic() - t0)
            record.close("interrupted", time.monotonic() - started + spent)
            _interrupted(record.path)
            raise RunInterrupted(record.path) from None
        record.finished(sub.name, status, time.monotonic() - t0, note, code)
        out.print(f"decide: {sub.name}: {status} in {time.monotonic() - t0:.0f} s" + (f" ({note})" if note else ""))
        codes.append(code or 0)
    record.close("completed", time.monotonic() - started + spent)
    decision = load_decision(record.path)
    page = write_page(decision)
    print_page(decision, out)
    out.print(f"page: {page}\ndecision: {record.path}")
    return 0 if not any(codes) else 1


def _interrupted(path: Path) -> None:
    from tdebench.cli.run import RunInterrupted

    RunInterrupted.last_run_dir = path  # the CLI says how to continue it: tdebench decide --resume PATH
    RunInterrupted.resume_command = "tdebench decide --resume"


def continue_decision(path: Path, work_dir: Path | None) -> int:
    """``--resume``: the sub-runs not completed, then the page (a decision still running elsewhere is refused)."""
    import os

    from tdebench.decide.record import DecisionRecord

    record = DecisionRecord.read(path)
    pid = (record.data.get("owner") or {}).get("pid")
    if record.data.get("status") == "running" and isinstance(pid, int) and pid != os.getpid() and _alive(pid):
        raise UsageError(f"decision {path} is still running (pid {pid})", "wait for it, or stop it first")
    if record.data.get("status") == "completed":
        raise UsageError(f"decision {path} is already completed", "rebuild its page with tdebench report " + str(path))
    record.data.update(status="running", owner={"pid": os.getpid()})
    record.write()
    _interrupted(path)
    return run_decision(record, work_dir)


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
