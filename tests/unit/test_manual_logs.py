"""Log parsers on console transcripts written like each client prints them (tests/fixtures/logs/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tdebench.errors import UsageError
from tdebench.manual.logparse import StreamRun, parse_log, parse_text
from tdebench.manual.logscan import decode, mysql_seconds

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"


def _run(name: str, dialect: str) -> StreamRun:
    log = parse_log(LOGS / name, dialect)
    assert len(log.runs) == 1
    return log.runs[0]


def _by_query(run: StreamRun) -> dict[int, object]:
    return {q.number: q for q in run.results()}


def test_sqlcmd_statistics_time() -> None:
    assert b"\r\n" in (LOGS / "sqlcmd_power_stream00.log").read_bytes()  # sqlcmd on Windows: CRLF
    run = _run("sqlcmd_power_stream00.log", "tsql")
    q = _by_query(run)
    assert run.stream == 0 and run.test == "power"
    assert run.header["dialect"] == "tsql" and run.header["q15"] == "view"
    assert run.begin == "2026-03-02T09:15:01.1234567" and run.wall_seconds() == pytest.approx(8.641976)
    assert (q[14].status, q[14].elapsed, q[14].cpu, q[14].compile) == ("ok", 1.321, 1.235, 0.021)
    assert (q[6].status, q[6].elapsed) == ("ok", 0.655)
    assert q[9].status == "failed" and "Invalid object name 'partsuppx'" in q[9].reason
    assert q[13].status == "ok" and q[13].elapsed == 3.12
    assert q[13].warnings and "Null value is eliminated" in q[13].warnings[0]
    assert q[15].status == "ok" and q[15].elapsed == pytest.approx(0.005 + 0.900 + 0.007)  # view, select, drop
    assert q[15].cpu == pytest.approx(0.844) and q[15].compile == pytest.approx(0.017)
    assert q[12].elapsed == 1.602
    missing = [n for n, r in q.items() if r.status == "missing"]
    assert len(missing) == 16 and 20 in missing and all(q[n].reason == "not in the log" for n in missing)


def test_sqlplus_elapsed_pagination_and_errors() -> None:
    run = _run("sqlplus_power_stream00.log", "oracle")
    q = _by_query(run)
    assert (q[14].status, q[14].elapsed, q[14].cpu) == ("ok", 1.27, None)
    assert q[4].elapsed == 2.05
    assert q[13].status == "ok" and q[13].elapsed == 4.61  # headings repeated on every page: noise
    assert q[9].status == "failed" and "ORA-00942" in q[9].reason
    assert q[22].status == "failed" and "SP2-0734" in q[22].reason
    assert q[15].elapsed == pytest.approx(0.05 + 2.40 + 0.03)
    assert q[17].elapsed == pytest.approx(62.35)  # Elapsed: 00:01:02.35
    assert run.wall_seconds() == pytest.approx(75.375)


def test_mysql_client_vvv() -> None:
    run = _run("mysql_vvv_power_stream00.log", "mysql")
    q = _by_query(run)
    assert (q[14].status, q[14].elapsed) == ("ok", 12.04)  # marker SELECTs' "(0.00 sec)" are not counted
    assert q[6].elapsed == 4.87
    assert q[17].elapsed == pytest.approx(63.27)  # "1 row in set (1 min 3.27 sec)"
    assert q[19].status == "ok" and q[19].elapsed == 2.51
    assert q[19].warnings and "Code 3170" in q[19].warnings[0]
    assert q[20].status == "failed" and "ERROR 1146" in q[20].reason
    assert q[15].status == "ok" and q[15].elapsed == pytest.approx(0.01 + 9.80 + 0.00)
    assert q[16].status == "failed" and "Lost connection" in q[16].reason  # no end marker either
    assert run.begin and run.end is None and run.wall_seconds() is None


def test_mysql_crlf_and_interactive_tee_give_the_same_times() -> None:
    text = (LOGS / "mysql_vvv_power_stream00.log").read_text()
    reference = [(q.number, q.status, q.elapsed) for q in _run("mysql_vvv_power_stream00.log", "mysql").results()]
    crlf = decode(text.replace("\n", "\r\n").encode())
    runs, _, _ = parse_text("mysql", crlf)
    assert [(q.number, q.status, q.elapsed) for q in runs[0].results()] == reference
    # interactive `tee`: no statement echo, prompts instead
    lines, skip = [], False
    for line in text.splitlines():
        if line == "--------------":
            skip = not skip
            if skip:
                lines.append("mysql> source stream00.sql")
            continue
        if not skip:
            lines.append(line)
    runs, _, _ = parse_text("mysql", lines)
    assert [(q.number, q.status, q.elapsed) for q in runs[0].results()] == reference


def test_psql_timing() -> None:
    run = _run("psql_power_stream00.log", "postgres")
    q = _by_query(run)
    assert q[14].elapsed == pytest.approx(1.234567)  # "Time: 1234.567 ms (00:01.235)"
    assert q[6].elapsed == pytest.approx(0.812004)
    assert q[9].status == "failed" and "does not exist" in q[9].reason
    assert q[15].elapsed == pytest.approx(0.003018 + 1.51025 + 0.002732)
    assert q[17].elapsed == pytest.approx(63.270112)
    assert q[12].status == "ok" and q[12].warnings
    assert run.wall_seconds() == pytest.approx(70.5)


@pytest.mark.parametrize("text,seconds", [("0.12 sec", 0.12), ("1 min 2.35 sec", 62.35),
                                          ("1 hour 0 min 1.00 sec", 3601.0), ("2 days 3 hours 4 min 5.50 sec",
                                                                              2 * 86400 + 3 * 3600 + 245.5)])
def test_mysql_nice_time(text: str, seconds: float) -> None:
    assert mysql_seconds(text) == pytest.approx(seconds)


def test_echoed_markers_count_once() -> None:
    lines = ["PRINT 'tdebench:begin q14 stream 0';", "tdebench:begin q14 stream 0", "",
             " SQL Server Execution Times:", "   CPU time = 10 ms,  elapsed time = 20 ms.",
             "PRINT 'tdebench:end q14 stream 0';", "tdebench:end q14 stream 0"]
    runs, timings, notes = parse_text("tsql", lines)
    assert len(runs) == 1 and timings == 1 and not notes
    assert runs[0].queries[14].elapsed == 0.02


def test_begin_without_end_is_failed_and_rerun_is_a_new_run() -> None:
    lines = ["tdebench:begin q14 stream 0", "Time: 5.000 ms",  # cut off: no end marker
             "tdebench:begin q14 stream 0", "Time: 7.000 ms", "tdebench:end q14 stream 0",
             "tdebench:begin q14 stream 0", "Time: 9.000 ms", "tdebench:end q14 stream 0"]
    runs, _, _ = parse_text("postgres", lines)
    # the unfinished first q14 is failed; each later begin of a finished query starts a new run of stream 0
    assert [(r.queries[14].status, r.queries[14].elapsed) for r in runs] == [
        ("failed", 0.005), ("ok", 0.007), ("ok", 0.009)]
    assert "no end marker" in runs[0].queries[14].reason


def test_markers_without_timing_are_missing_not_zero() -> None:
    runs, timings, _ = parse_text("postgres", ["tdebench:begin q14 stream 0", "tdebench:end q14 stream 0"])
    q14 = runs[0].queries[14]
    assert timings == 0 and q14.status == "missing" and "timing" in q14.reason


def test_utf16_log(tmp_path: Path) -> None:
    path = tmp_path / "unicode.log"
    text = (LOGS / "sqlcmd_power_stream00.log").read_text()
    path.write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    log = parse_log(path, "tsql")
    assert log.runs[0].queries[14].elapsed == 1.321


def test_log_without_markers_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plain.log"
    path.write_text("Elapsed: 00:00:01.00\n")
    with pytest.raises(UsageError, match="no tdebench markers"):
        parse_log(path, "oracle")
