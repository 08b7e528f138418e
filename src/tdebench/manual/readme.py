"""The README.md written next to the generated scripts: how to run each one and capture its log."""

from __future__ import annotations

from tdebench.manual.clients import client_for
from tdebench.manual.plan import ScriptPlan


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
    lines += [f"- {note}" for note in client.notes]
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
        f"tdebench import --dialect {plan.dialect} --config encrypted --encryption {client.example_spec} "
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
