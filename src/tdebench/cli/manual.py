"""Manual-mode commands: ``script``, ``import`` and ``tde-setup`` (registered in :mod:`tdebench.cli.app`).

Errors are raised as :class:`tdebench.errors.UsageError`; ``tdebench.cli.app.main`` turns them into one line
and exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from tdebench.errors import UsageError


def _echo(text: str) -> None:
    """Plain output (no rich markup: the texts contain [sections] and <PLACEHOLDERS>)."""
    typer.echo(text)


def script_command(
    dialect: Annotated[str, typer.Option(help="tsql, oracle, mysql, mariadb or postgres.")],
    test: Annotated[str, typer.Option(help="power (stream 0) or throughput (streams 1..N).")] = "power",
    streams: Annotated[Optional[int], typer.Option(
        help="Throughput streams (default: the spec's minimum for the scale factor).")] = None,
    sf: Annotated[float, typer.Option(help="TPC-H scale factor of the data on the server.")] = 1.0,
    out_dir: Annotated[Optional[Path], typer.Option(
        "--out", help="Directory for the scripts and README.md (default tdebench-scripts-<dialect>-<test>).")] = None,
    q15: Annotated[str, typer.Option(help="Q15 as 'with' (one statement, as tdebench's engines run it) or "
                                          "'view' (create view revenue<stream>, select, drop view).")] = "with",
) -> None:
    """Write runnable TPC-H scripts (one per stream) for a server tdebench cannot reach; see README.md."""
    from tdebench.manual.plan import plan_scripts
    from tdebench.manual.script import write_scripts

    plan = plan_scripts(dialect, test, streams, sf, q15.strip().lower())
    target = out_dir or Path(f"tdebench-scripts-{plan.dialect}-{plan.test}")
    paths = write_scripts(plan, target)
    _echo(f"wrote {len(paths) - 1} script(s) and README.md to {target}")
    for path in paths:
        _echo(f"  {path}")


def _settings(items: list[str]) -> dict[str, str]:
    settings: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bad --setting '{item}'", "write KEY=VALUE, e.g. --setting innodb_buffer_pool_size=8G")
        settings[key.strip()] = value.strip()
    return settings


def import_command(
    logs: Annotated[list[Path], typer.Argument(help="Console logs of the generated scripts.")],
    dialect: Annotated[str, typer.Option(help="tsql, oracle, mysql, mariadb or postgres.")],
    config: Annotated[str, typer.Option(help="Config label, e.g. plain or tde-aes256.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Run directory (new, or one to add this config to).")],
    encryption: Annotated[str, typer.Option(help="Encryption spec the server had, e.g. none, tde:aes-256.")] = "none",
    trial: Annotated[Optional[int], typer.Option(help="Trial number (default: the config's next one).")] = None,
    warmup: Annotated[bool, typer.Option(help="Record these logs as a warm-up (block 0, not analysed).")] = False,
    engine: Annotated[Optional[str], typer.Option(help="Engine name to record (default from the dialect).")] = None,
    engine_version: Annotated[Optional[str], typer.Option(help="Server version to record.")] = None,
    setting: Annotated[list[str], typer.Option(help="KEY=VALUE server setting to record; repeatable.")] = [],
    sf: Annotated[Optional[float], typer.Option(help="Scale factor, if the logs do not say it.")] = None,
    report: Annotated[bool, typer.Option(help="Rebuild the report of the run directory afterwards.")] = True,
) -> None:
    """Read console logs of `tdebench script` scripts into a run directory (one trial per import)."""
    from tdebench.manual.importer import ImportRequest, import_logs

    result = import_logs(ImportRequest(
        run_dir=out_dir, dialect=dialect, config=config, logs=list(logs), encryption=encryption, trial=trial,
        warmup=warmup, engine=engine, engine_version=engine_version, settings=_settings(setting), sf=sf,
        command_line=["tdebench", *sys.argv[1:]],
    ))
    counts = ", ".join(f"{n} {status}" for status, n in sorted(result.status.items()))
    what = "warm-up" if warmup else "trial " + ", ".join(str(t) for t in result.trials)
    _echo(f"imported {len(logs)} log(s) as {result.config} {what} into {result.run_dir}: {counts} query times")
    for problem in result.problems:
        _echo(f"  note: {problem}")
    if report:
        from rich.console import Console

        from tdebench.cli.run import build_report_for

        path = build_report_for(out_dir, Console(stderr=True))
        if path is not None:
            _echo(f"report: {path}")


def tde_setup_command(
    engine: Annotated[str, typer.Option(help="mysql, sqlserver, oracle or mariadb.")],
    encryption: Annotated[str, typer.Option(help="Spec to set up, e.g. tde:aes-256, or fs:fscrypt / fs:gocryptfs "
                                                 "(mariadb, mysql) (none: baseline checks).")],
) -> None:
    """Print the exact, commented steps for a DBA to turn that encryption on (placeholders, no secrets)."""
    from tdebench.manual.tde_steps import setup_text

    _echo(setup_text(engine, encryption).rstrip("\n"))
