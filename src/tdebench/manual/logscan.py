"""Turn a console log into a flat list of events, one scanner per client.

Events: the tdebench markers (script header, stream begin/end with the server's UTC time, query begin/end),
statement timings (``exec``; SQL Server also ``compile``), ``error`` and ``warning``. Everything else —
result rows, headers, pagination, prompts, "(N rows affected)", echo of the statements — is noise and ignored.
Lines may end in LF, CRLF or CR; UTF-8 and UTF-16 (sqlcmd ``-u``) logs are read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

MARKER = re.compile(r"tdebench:(begin|end) q(\d{1,2}) stream (\d+)\b")
STAMP = re.compile(r"tdebench:stream-(begin|end) (\d+) (\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?)")
HEADER = re.compile(r"tdebench:script (v\d+)((?: [a-z0-9_]+=[^\s'|]+)+)")


@dataclass
class Event:
    """One thing found in a log."""

    kind: str  # header | stream-begin | stream-end | begin | end | exec | compile | error | warning
    line: int
    query: int | None = None
    stream: int | None = None
    seconds: float | None = None
    cpu: float | None = None
    text: str = ""
    info: dict[str, str] | None = None


def decode(data: bytes) -> list[str]:
    """The lines of a log (BOM-aware; undecodable bytes replaced), trailing blanks removed."""
    if data.startswith(b"\xff\xfe") or data.startswith(b"\xfe\xff"):
        text = data.decode("utf-16", errors="replace")
    else:
        text = data.decode("utf-8-sig", errors="replace")
    return [line.rstrip() for line in text.splitlines()]


def marker_events(line: str, number: int) -> list[Event]:
    """The tdebench markers on one line (usually none)."""
    if "tdebench:" not in line:
        return []
    events: list[Event] = []
    match = HEADER.search(line)
    if match:
        info = dict(pair.split("=", 1) for pair in match.group(2).split())
        events.append(Event("header", number, info={"version": match.group(1), **info}))
    for match in STAMP.finditer(line):
        events.append(Event(f"stream-{match.group(1)}", number, stream=int(match.group(2)),
                            text=match.group(3).replace(" ", "T")))
    for match in MARKER.finditer(line):
        events.append(Event(match.group(1), number, query=int(match.group(2)), stream=int(match.group(3))))
    return events


# ---------------------------------------------------------------------------------------------- sqlcmd
_MSSQL_COMPILE = re.compile(r"SQL Server parse and compile time", re.I)
_MSSQL_EXEC = re.compile(r"SQL Server Execution Times", re.I)
_MSSQL_TIMES = re.compile(r"CPU time = (\d+) ms,\s*elapsed time = (\d+) ms", re.I)
_MSSQL_MSG = re.compile(r"^Msg (\d+), Level (\d+), State \d+")
_MSSQL_TOOL = re.compile(r"^Sqlcmd: (Error|Warning):", re.I)


def scan_tsql(lines: list[str]) -> Iterator[Event]:
    """sqlcmd output with SET STATISTICS TIME ON."""
    pending = "exec"
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        yield from marker_events(line, i)
        if _MSSQL_COMPILE.search(line):
            pending = "compile"
        elif _MSSQL_EXEC.search(line):
            pending = "exec"
        times = _MSSQL_TIMES.search(line)
        if times:
            yield Event(pending, i, seconds=int(times.group(2)) / 1000, cpu=int(times.group(1)) / 1000)
            pending = "exec"
            continue
        msg = _MSSQL_MSG.match(line)
        if msg:
            detail = lines[i].strip() if i < len(lines) else ""
            kind = "error" if int(msg.group(2)) > 10 else "warning"
            yield Event(kind, i, text=f"{line}: {detail}".rstrip(": "))
        elif _MSSQL_TOOL.match(line):
            yield Event("error" if "error" in line[:14].lower() else "warning", i, text=line)
        elif line.startswith("Warning:"):
            yield Event("warning", i, text=line)


# ---------------------------------------------------------------------------------------------- SQL*Plus
_ORA_ELAPSED = re.compile(r"^Elapsed: (?:(\d+) )?(\d+):(\d\d):(\d\d(?:[.,]\d+)?)$")
_ORA_ERROR = re.compile(r"^(ORA|SP2|TNS|PLS)-\d{4,5}\b")


def scan_oracle(lines: list[str]) -> Iterator[Event]:
    """SQL*Plus output (spool or stdout) with SET TIMING ON."""
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        yield from marker_events(line, i)
        elapsed = _ORA_ELAPSED.match(line)
        if elapsed:
            days, hours, minutes, seconds = elapsed.groups()
            total = (int(days or 0) * 24 + int(hours)) * 3600 + int(minutes) * 60 + float(seconds.replace(",", "."))
            yield Event("exec", i, seconds=total)
        elif _ORA_ERROR.match(line):
            yield Event("error", i, text=line)
        elif line.startswith("Warning:"):
            yield Event("warning", i, text=line)


# ---------------------------------------------------------------------------------------------- mysql client
_MY_RESULT = re.compile(
    r"^(?:\d+ rows? in set|Empty set|Query OK)(?:,[^()]*)?\s*"
    r"\(((?:\d+ days? )?(?:\d+ hours? )?(?:\d+ min )?\d+(?:\.\d+)? sec)\)$")
_MY_PART = re.compile(r"(\d+(?:\.\d+)?) (day|hour|min|sec)")
_MY_UNIT = {"day": 86400, "hour": 3600, "min": 60, "sec": 1}
_MY_ERROR = re.compile(r"^ERROR \d+( \([0-9A-Z]{5}\))?")
_MY_WARNING = re.compile(r"^(Warning|Note) \(Code \d+\):")


def mysql_seconds(text: str) -> float:
    """Seconds from the client's ``nice_time`` text, e.g. ``1 hour 2 min 3.45 sec``."""
    return sum(float(n) * _MY_UNIT[unit] for n, unit in _MY_PART.findall(text))


def scan_mysql(lines: list[str]) -> Iterator[Event]:
    """mysql/mariadb client output with -vvv (batch) or an interactive ``tee`` transcript.

    Output comes in blocks that end with the statement's result line ("N rows in set (X sec)", "Query OK, …
    (X sec)", "Empty set (X sec)") or an ERROR line. A block that shows a marker is the marker's own
    ``SELECT``: its time is dropped. Warnings (``--show-warnings``) follow the result line, so they land in
    the next block and are emitted before its markers.
    """
    block: list[Event] = []
    has_marker = False
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        for event in marker_events(line, i):
            previous = block[-1] if block else None
            if not (previous and previous.kind == event.kind and previous.query == event.query
                    and previous.stream == event.stream and previous.text == event.text):
                block.append(event)
            has_marker = True
        if _MY_WARNING.match(line):
            block.append(Event("warning", i, text=line))
            continue
        result = _MY_RESULT.match(line)
        error = _MY_ERROR.match(line)
        if not (result or error):
            continue
        yield from block
        if error:
            yield Event("error", i, text=line)
        elif not has_marker:
            yield Event("exec", i, seconds=mysql_seconds(result.group(1)))
        block, has_marker = [], False
    yield from block


# ---------------------------------------------------------------------------------------------- psql
_PG_TIME = re.compile(r"^Time: (\d+(?:\.\d+)?) ms(?: \([^)]*\))?$")
_PG_ERROR = re.compile(r"^(?:psql:\S*?:\d+: )?(?:ERROR|FATAL|PANIC):\s|^psql: error:")
_PG_WARNING = re.compile(r"^(?:psql:\S*?:\d+: )?WARNING:\s")


def scan_postgres(lines: list[str]) -> Iterator[Event]:
    """psql output with \\timing on."""
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        yield from marker_events(line, i)
        time = _PG_TIME.match(line)
        if time:
            yield Event("exec", i, seconds=float(time.group(1)) / 1000)
        elif _PG_ERROR.match(line):
            yield Event("error", i, text=line)
        elif _PG_WARNING.match(line):
            yield Event("warning", i, text=line)
