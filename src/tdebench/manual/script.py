"""``tdebench script``: one runnable TPC-H script per query stream, with markers and the client's timing on.

Stream 0 is the power test; throughput streams are 1..N, each in the query order of row ``s % 41``.
Every query is wrapped in ``tdebench:begin qNN stream S`` / ``tdebench:end qNN stream S`` lines, and every
stream in ``tdebench:stream-begin S <UTC time>`` / ``tdebench:stream-end S <UTC time>`` lines, which is all
``tdebench import`` needs to read the console log back.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tdebench import __version__
from tdebench.errors import UsageError
from tdebench.manual.clients import client_for
from tdebench.workloads.tpch.dialects import query_statements
from tdebench.manual.plan import SCRIPT_VERSION, ScriptPlan
from tdebench.manual.readme import readme_text
from tdebench.sqltext.tree import SQLGLOT_VERSION
from tdebench.workloads.tpch.streams import stream_order


def _sf_text(sf: float) -> str:
    return f"{sf:g}"


def script_header_marker(plan: ScriptPlan, stream: int) -> str:
    """The first marker of a script: lets ``import`` check the dialect, test, stream, SF and Q15 form."""
    return (f"tdebench:script {SCRIPT_VERSION} dialect={plan.dialect} test={plan.test} stream={stream} "
            f"sf={_sf_text(plan.sf)} q15={plan.q15}")


def stream_script(plan: ScriptPlan, stream: int) -> str:
    """The full text of one stream's script."""
    client = client_for(plan.dialect)
    order = stream_order(stream)
    log = plan.log_name(stream)
    lines = [
        f"-- tdebench {__version__}: TPC-H {plan.test} test, stream {stream}, scale factor {_sf_text(plan.sf)}, "
        f"dialect {plan.dialect}, client {client.name}",
        f"-- generated {datetime.now(timezone.utc).isoformat(timespec='seconds')} with sqlglot {SQLGLOT_VERSION}; "
        f"Q15 as {'a view' if plan.q15 == 'view' else 'a WITH clause'}",
        f"-- query order (row {stream % 41} of TPC-H Appendix A): {' '.join(str(q) for q in order)}",
        f"-- run:    {client.run_hint.format(script=plan.script_name(stream), log=log)}",
        f"-- import: tdebench import --dialect {plan.dialect} --config <LABEL> --encryption <SPEC> "
        f"--out <RUN_DIR> {log}",
        "-- Do not edit the tdebench: lines; they are how the log is read back.",
        "",
    ]
    lines += [line.format(log=log) for line in client.prologue]
    lines.append(client.marker(script_header_marker(plan, stream)))
    lines.append(client.stamp(f"tdebench:stream-begin {stream}"))
    for number in order:
        text = query_statements(number, plan.dialect, plan.sf, stream, plan.q15)
        lines += ["", f"-- TPC-H Q{number}", client.marker(f"tdebench:begin q{number:02d} stream {stream}")]
        lines += [client.statement(sql) for sql in text.statements]
        lines.append(client.marker(f"tdebench:end q{number:02d} stream {stream}"))
    lines += ["", client.stamp(f"tdebench:stream-end {stream}")]
    lines += list(client.epilogue)
    return "\n".join(lines) + "\n"


def write_scripts(plan: ScriptPlan, out_dir: Path) -> list[Path]:
    """Write every stream's script and README.md into ``out_dir``; the paths written."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out_dir}: {exc.strerror or exc}", "pass --out with a writable directory")
    written = []
    for stream in plan.streams:
        path = out_dir / plan.script_name(stream)
        path.write_text(stream_script(plan, stream), encoding="utf-8")
        written.append(path)
    readme = out_dir / "README.md"
    readme.write_text(readme_text(plan), encoding="utf-8")
    written.append(readme)
    return written
