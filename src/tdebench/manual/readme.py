"""The README.md written next to the generated scripts: how to run each one and capture its log."""

from __future__ import annotations

from tdebench.manual.clients import client_for
from tdebench.manual.plan import ScriptPlan

_EXAMPLE_SPEC = {"tsql": "tde:aes-256", "oracle": "tde:aes-256", "mysql": "tde:aes-256-cbc",
                 "mariadb": "tde:aes-256-cbc", "postgres": "fs:gocryptfs"}
_CLIENT_NOTES = {
    "tsql": [
        "Authenticate with `-E` (Windows) or `-U <USER>` and the `SQLCMDPASSWORD` environment variable.",
        "Do not pass `-b`: a failing query must not stop the stream (it is imported as `failed`).",
        "`-o` writes the results, the PRINT markers and the STATISTICS TIME messages to the log, in order.",
        "SQL Server shares **tempdb** between all databases of an instance: as soon as one database uses TDE, "
        "tempdb is encrypted for all of them. Run the plain baseline on its own instance "
        "(see `tdebench tde-setup --engine sqlserver`).",
    ],
    "oracle": [
        "The script spools its own log (`SPOOL`) and hides the rows on the terminal (`SET TERMOUT OFF`), so "
        "terminal output does not inflate the `Elapsed:` times; run it from the directory where the log "
        "should be written.",
        "FETCH FIRST n ROWS ONLY needs Oracle 12c or later.",
    ],
    "mysql": [
        "`-vvv` makes the batch-mode client print tables and the `N rows in set (X sec)` lines; without it "
        "the log has no times. `--force` keeps going after an error, `--unbuffered` keeps errors (stderr) "
        "in order with the output, `2>&1` puts both in the log.",
        "The interactive alternative: `tee stream00.log` then `source stream00.sql` inside `mysql`.",
        "MySQL InnoDB encrypts with AES-256 only (see `tdebench tde-setup --engine mysql`).",
    ],
    "mariadb": [
        "`-vvv` makes the batch-mode client print tables and the `N rows in set (X sec)` lines; without it "
        "the log has no times. `--force` keeps going after an error, `--unbuffered` keeps errors in order.",
        "These queries are exactly the ones `tdebench run --engine mariadb` runs.",
    ],
    "postgres": [
        "`-X` ignores `~/.psqlrc`; the password comes from `PGPASSWORD` or `~/.pgpass`.",
        "These queries are exactly the ones tdebench's PostgreSQL engine runs.",
    ],
}


def readme_text(plan: ScriptPlan) -> str:
    """Markdown instructions for the scripts of ``plan``."""
    client = client_for(plan.dialect)
    first = plan.streams[0]
    runs = "\n".join(client.run_hint.format(script=plan.script_name(s), log=plan.log_name(s)) for s in plan.streams)
    logs = " ".join(plan.log_name(s) for s in plan.streams)
    lines = [
        f"# TPC-H {plan.test} test scripts for {client.name}",
        "",
        f"Written by `tdebench script --dialect {plan.dialect} --test {plan.test} --sf {plan.sf:g}"
        + (f" --streams {len(plan.streams)}" if plan.test == "throughput" else "")
        + f" --q15 {plan.q15}`. Scale factor {plan.sf:g}; the database must hold TPC-H data of that scale "
        "factor, with the standard table and column names.",
        "",
        "| script | stream | log to capture |",
        "|---|---|---|",
    ]
    lines += [f"| `{plan.script_name(s)}` | {s} | `{plan.log_name(s)}` |" for s in plan.streams]
    lines += ["", "## Run", "", "```sh", runs, "```", ""]
    if plan.test == "throughput":
        lines += [
            "Start **all streams at the same time**, one session each, and wait for all of them, e.g.",
            "",
            "```sh",
            *(f"{client.run_hint.format(script=plan.script_name(s), log=plan.log_name(s))} &" for s in plan.streams),
            "wait",
            "```",
            "",
            "Each stream prints its start and end time (the server's UTC clock); `import` takes the throughput "
            "test's wall time from the earliest start to the latest end.",
            "",
        ]
    lines += [f"- {note}" for note in _CLIENT_NOTES[plan.dialect]]
    lines += [
        f"- Times: {client.timing_note}.",
        "- The refresh functions RF1/RF2 are not part of these scripts.",
        "",
        "## Import",
        "",
        "Run the same scripts once per configuration (e.g. plain, then TDE), keeping every log. "
        "Alternate the configurations trial by trial (plain 1, tde 1, plain 2, tde 2, …): trial *n* of every "
        "configuration is treated as block *n*, paired in the statistics.",
        "",
        "```sh",
        f"tdebench import --dialect {plan.dialect} --config plain --encryption none --out results/manual {logs}",
        f"tdebench import --dialect {plan.dialect} --config encrypted --encryption {_EXAMPLE_SPEC[plan.dialect]} "
        f"--out results/manual {logs}",
        "tdebench report results/manual",
        "```",
        "",
        "Each import adds one trial (or pass `--trial N`). A query whose log shows an error is recorded as "
        "`failed`, a query that is not in the log as `missing` (never as zero).",
        "",
        f"Do not edit the `tdebench:` lines in the scripts; `{plan.script_name(first)}` must stay stream {first}.",
        "",
    ]
    return "\n".join(lines)
