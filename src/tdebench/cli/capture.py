"""``tdebench capture``: a ``--workload sql`` directory taken read-only from a running server or an SQLite file
(docs/workloads/capture.md). Registered in :mod:`tdebench.cli.app`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


def capture_command(
    source: Annotated[str, typer.Option(
        "--from", help="mariadb://USER@HOST[:PORT]/DB, mysql://..., postgresql://USER@HOST[:PORT]/DB, or an "
                       "SQLite file. The password comes from TDEBENCH_PASSWORD_SOURCE (or ?password_env=VAR), never "
                       "the URL.")],
    out: Annotated[Path, typer.Option("--out", help="New directory for the workload (schema.sql, data/, queries/, "
                                                    "writes/, workload.toml, capture.json).")],
    log: Annotated[Optional[Path], typer.Option(
        help="The server's log of the capture window: MariaDB/MySQL slow or general log, PostgreSQL stderr or csvlog "
             "(log_min_duration_statement=0). Statements and their values come from it.")] = None,
    statements: Annotated[str, typer.Option(
        help="Where the hot statements come from: auto (the log if --log, else the server's statistics), "
             "statistics (ranked by the server; values from --log or its statement history), log, none.")] = "auto",
    top: Annotated[int, typer.Option(help="Keep the N statements with the largest total time.")] = 20,
    max_rows: Annotated[Optional[int], typer.Option(help="At most N rows per table (by primary key).")] = None,
    tables: Annotated[Optional[str], typer.Option(help="Comma-separated tables to capture (default: all).")] = None,
    redact_literals: Annotated[bool, typer.Option(
        "--redact-literals", help="Keep the application's literal values out of the captured statements: each is "
                                  "replaced by a value drawn from the captured data (docs/workloads/capture.md).")] = False,
) -> None:
    """Capture schema, data and hot statements from a server (read-only) as a --workload sql directory."""
    from tdebench.capture.run import Options, capture
    from tdebench.errors import UsageError

    if statements not in ("auto", "statistics", "log", "none"):
        raise UsageError(f"unknown --statements '{statements}'", "use auto, statistics, log or none")
    chosen = [t.strip() for t in tables.split(",") if t.strip()] if tables else None
    facts = capture(Options(source, out, log, top, max_rows, chosen, statements, redact_literals),
                    lambda line: typer.echo(line, err=True))
    steps = facts["steps"]
    typer.echo(f"captured {len(facts['tables'])} tables ({sum(t['rows'] for t in facts['tables'].values())} rows) "
               f"and {len(steps)} statements into {out}; {len(facts['left_out'])} left out (see {out}/capture.json)")
    if any(s["kind"] == "query" for s in steps):
        typer.echo(f"run it: tdebench run --workload sql --workload-dir {out} --engine sqlite,mariadb,postgres")
    else:
        typer.echo(f"no query captured: add {out}/queries/<name>.sql (docs/workloads/sql.md), or capture with --log")
