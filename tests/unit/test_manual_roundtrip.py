"""Script -> simulated console log -> import -> run directory (-> report), for tsql, oracle and mysql.

The simulator plays the client: it walks the generated script statement by statement, prints what sqlcmd,
SQL*Plus or the mysql client print for it (markers, result tables, timing lines) and invents the query times.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tdebench.api.manifest import SCHEMA_VERSION
from tdebench.manual.importer import ImportRequest, import_logs
from tdebench.manual.plan import plan_scripts
from tdebench.manual.script import write_scripts
from tdebench.results.rundir import RunDirectory
from tdebench.workloads.tpch.streams import stream_order

T0 = datetime(2026, 3, 2, 9, 0, 0)


def query_ms(number: int, stream: int, factor: float) -> int:
    """Invented server time of one statement of query ``number`` in ms (multiple of 10: mysql prints 0.01 s)."""
    return int(round((200 + 37 * number + 11 * stream) * factor / 10.0)) * 10


def _stamp(kind: str, stream: int, seconds: float) -> str:
    return f"tdebench:stream-{kind} {stream} {(T0 + timedelta(seconds=seconds)).isoformat(timespec='microseconds')}"


def _marker_text(line: str) -> str | None:
    match = re.search(r"'(tdebench:[^']*)'", line)
    return match.group(1) if match else None


def simulate(dialect: str, script: str, factor: float, offset: float) -> tuple[str, dict[int, float]]:
    """The console log of ``script`` and the elapsed seconds per query it contains."""
    out: list[str] = []
    times: dict[int, float] = {}
    current: list[int | None] = [None]
    stream = int(re.search(r"stream=(\d+)", script).group(1))

    def query(statement: str) -> int:
        number = current[0]
        ms = query_ms(number or 0, stream, factor)
        times[number] = times.get(number, 0.0) + ms / 1000
        return ms

    def marker(text: str) -> None:
        m = re.match(r"tdebench:(begin|end) q(\d\d)", text)
        if m:
            current[0] = int(m.group(2)) if m.group(1) == "begin" else None

    if dialect == "tsql":
        for batch in re.split(r"^GO$", script, flags=re.M):
            body = "\n".join(x for x in batch.splitlines() if x.strip() and not x.startswith("--"))
            if not body or body.startswith("SET "):
                continue
            out += ["SQL Server parse and compile time: ", "   CPU time = 0 ms, elapsed time = 1 ms."]
            if body.startswith("PRINT"):
                text = _marker_text(body)
                if "CONVERT(" in body:
                    kind = "begin" if "stream-begin" in body else "end"
                    text = _stamp(kind, stream, offset + (0 if kind == "begin" else 500))
                marker(text)
                out += [text, "", " SQL Server Execution Times:", "   CPU time = 0 ms,  elapsed time = 0 ms."]
            else:
                ms = query(body)
                out += ["col1", "----------", "         1", "", "(1 row affected)", "",
                        " SQL Server Execution Times:", f"   CPU time = {ms // 2} ms,  elapsed time = {ms} ms."]
        return "\r\n".join(out) + "\r\n", times
    if dialect == "oracle":
        buffer: list[str] = []
        for line in script.splitlines():
            if not buffer and (not line.strip() or line.startswith("--") or
                               re.match(r"^(SET|SPOOL|WHENEVER|EXIT)\b", line)):
                continue
            if not buffer and line.startswith("PROMPT "):
                marker(line[7:])
                out.append(line[7:])
                continue
            buffer.append(line)
            if not line.endswith(";"):
                continue
            body, buffer = "\n".join(buffer), []
            if "SYSTIMESTAMP" in body:
                kind = "begin" if "stream-begin" in body else "end"
                out += ["", "TDEBENCH", "-" * 50, _stamp(kind, stream, offset + (0 if kind == "begin" else 500)),
                        "", "1 row selected.", "", "Elapsed: 00:00:00.00"]
                continue
            ms = query(body)
            sec = ms / 1000
            out += ["", "      COL1", "----------", "         1", "", "1 row selected.", "",
                    f"Elapsed: {int(sec // 3600):02d}:{int(sec % 3600 // 60):02d}:{sec % 60:05.2f}"]
        return "\n".join(out) + "\n", times
    # mysql -vvv
    statements = re.split(r";\n", "\n".join(x for x in script.splitlines() if not x.startswith("--")))
    for raw in statements:
        body = raw.strip()
        if not body:
            continue
        out += ["--------------", body, "--------------", ""]
        if "tdebench" in body:
            text = _marker_text(body) or ""
            if "UTC_TIMESTAMP" in body:
                kind = "begin" if "stream-begin" in body else "end"
                text = _stamp(kind, stream, offset + (0 if kind == "begin" else 500))
            marker(text)
            width = len(text)
            out += ["+" + "-" * (width + 2) + "+", f"| {'tdebench':<{width}} |", "+" + "-" * (width + 2) + "+",
                    f"| {text} |", "+" + "-" * (width + 2) + "+", "1 row in set (0.00 sec)", ""]
        elif body.upper().startswith(("CREATE", "DROP")):
            ms = query(body)
            out += [f"Query OK, 0 rows affected ({ms / 1000:.2f} sec)", ""]
        else:
            ms = query(body)
            out += ["+------+", "| col1 |", "+------+", "|    1 |", "+------+",
                    f"1 row in set ({ms / 1000:.2f} sec)", ""]
    out.append("Bye")
    return "\n".join(out) + "\n", times


def _build_report(run_dir: Path) -> None:
    try:
        from tdebench.report import build_report  # type: ignore[attr-defined]
    except ImportError:
        return
    build_report(run_dir)
    assert (run_dir / "report" / "index.html").is_file()


@pytest.mark.parametrize("dialect,q15", [("tsql", "view"), ("oracle", "with"), ("mysql", "view")])
def test_script_then_import_two_configs(tmp_path: Path, dialect: str, q15: str) -> None:
    scripts = tmp_path / "scripts"
    power = plan_scripts(dialect, "power", None, 1, q15)
    through = plan_scripts(dialect, "throughput", 2, 1, q15)
    write_scripts(power, scripts / "power")
    write_scripts(through, scripts / "throughput")
    run_dir = tmp_path / "run"
    expected: dict[tuple[str, int], dict[int, float]] = {}
    for config, spec, factor in (("plain", "none", 1.0), ("tde", "tde:aes-256-cbc" if dialect == "mysql"
                                                             else "tde:aes-256", 1.1)):
        logs = []
        for plan, stream in ((power, 0), (through, 1), (through, 2)):
            sub = "power" if stream == 0 else "throughput"
            text = (scripts / sub / plan.script_name(stream)).read_text()
            log, times = simulate(dialect, text, factor, offset=stream * 10.0)
            path = tmp_path / "logs" / config / plan.log_name(stream)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(log.encode())
            logs.append(path)
            expected[(config, stream)] = times
        result = import_logs(ImportRequest(run_dir=run_dir, dialect=dialect, config=config, logs=logs,
                                           encryption=spec, command_line=["tdebench", "import"]))
        assert result.trials == [1]
        assert result.status == {"ok": 66}

    rundir = RunDirectory(run_dir)
    manifest = rundir.read_manifest()
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["host"] == "unknown (imported)"
    assert [c["label"] for c in manifest["configs"]] == ["plain", "tde"]
    assert manifest["plan"]["workload_options"]["tests"] == ["power", "throughput"]
    assert manifest["plan"]["workload_options"]["sf"] == 1.0
    assert manifest["plan"]["blocks"] == [{"block": 1, "warmup": False, "order": ["plain", "tde"]}]
    assert all(len(entry["logs"]) == 3 for entry in manifest["imports"])

    rows = rundir.read_measurements()
    for (config, stream), times in expected.items():
        got = {r["step"]: float(r["value"]) for r in rows
               if r["config"] == config and r["stream"] == str(stream) and r["metric"] == "elapsed"}
        for number in stream_order(stream):
            assert got[f"q{number:02d}"] == pytest.approx(times[number], abs=1e-6)
        assert got["total"] == pytest.approx(sum(times.values()), abs=1e-6)
        assert got["wall"] == pytest.approx(500.0)
        assert all(r["block"] == "1" and r["trial"] == "1" for r in rows if r["config"] == config)
    walls = [r for r in rows if r["test"] == "throughput" and r["step"] == "wall" and r["stream"] == ""]
    assert sorted(float(r["value"]) for r in walls) == [510.0, 510.0]  # stream 1 at +10 s to stream 2 at +520 s
    assert not any(math.isnan(float(r["value"])) for r in rows)
    if dialect == "tsql":
        assert any(r["metric"] == "cpu" for r in rows)
    _build_report(run_dir)
