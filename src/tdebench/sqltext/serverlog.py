"""Statements read from a server's log: the MariaDB/MySQL slow log (``long_query_time=0``) and general log, and
PostgreSQL's stderr and csvlog formats (``log_min_duration_statement=0``). Each statement keeps its session,
its text with its literal values (PostgreSQL's bound ``$n`` parameters filled in from the DETAIL line) and its
duration where the log has one. The format is recognised from the file's first lines; anything else is refused.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from tdebench.errors import UsageError
from tdebench.sqltext.credentials import without_credentials

FORMATS = ("mysql-slow", "mysql-general", "postgres-stderr", "postgres-csv")


@dataclass
class Logged:
    session: str
    text: str
    seconds: float | None = None
    database: str | None = None
    #: when the statement started (seconds since the epoch, UTC), where the log says
    at: float | None = None


def _epoch(text: str) -> float | None:
    """Seconds since the epoch of a log's time stamp (``2024-11-26 23:45:01.123 UTC``, ``...T...Z``, ``241126
    23:45:01``); None when it is none of these."""
    text = text.strip()
    for pattern in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S",
                    "%y%m%d %H:%M:%S"):
        try:
            stamp = datetime.strptime(re.sub(r"(Z| UTC| GMT)$", "", text), pattern)
        except ValueError:
            continue
        return stamp.replace(tzinfo=timezone.utc).timestamp()
    return None


_SLOW_TIME = re.compile(r"^# Query_time: ([\d.]+)")
_SLOW_THREAD = re.compile(r"^# (?:Thread_id: (\d+)|User@Host: .*?Id:\s*(\d+))(?:.*Schema: (\S*))?")
_GENERAL = re.compile(r"^(\d{6}\s+\d{1,2}:\d\d:\d\d|\d{4}-\d\d-\d\dT[\d:.]+Z?)?\s+(\d+) (Query|Execute|Connect|"
                      r"Init DB|Quit|Prepare|Close stmt|Field List|Statistics|Ping|Refresh|Shutdown)\t?(.*)$")
_PG_LINE = re.compile(r"^(?P<prefix>.*?)(?P<level>LOG|DETAIL|ERROR|STATEMENT|HINT|CONTEXT|WARNING|FATAL|NOTICE):"
                      r"\s+(?P<msg>.*)$")
_PG_DURATION = re.compile(r"^duration: ([\d.]+) ms\s+(?:statement|execute [^:]*): (.*)$", re.S)
_PG_STATEMENT = re.compile(r"^(?:statement|execute [^:]*): (.*)$", re.S)
_PG_PARAM = re.compile(r"\$(\d+) = ('(?:[^']|'')*'|NULL)")
_PG_PID = re.compile(r"\[(\d+)\]")


def detect(path: Path) -> str:
    """The log's format; UsageError (exit 2) for an empty file or one in no format capture reads."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = [handle.readline() for _ in range(40)]
    except OSError as exc:
        raise UsageError(f"--log {path}: cannot be read ({exc.strerror})", "give the path of a readable log file") \
            from None
    text = "".join(head)
    if not text.strip():
        raise UsageError(f"--log {path}: is empty", "turn statement logging on for the capture window "
                         "(docs/workloads/capture.md), let the application run, then capture")
    if any(line.startswith("# Query_time:") for line in head) or "# User@Host:" in text:
        return "mysql-slow"
    if any(_GENERAL.match(line.rstrip("\n")) for line in head):
        return "mysql-general"
    first = next(line for line in head if line.strip())
    if re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \w+,", first):
        return "postgres-csv"
    if any(_PG_LINE.match(line) and "duration:" in line or "statement:" in line for line in head):
        return "postgres-stderr"
    # the line itself is never shown: it may be a statement holding a password or customer data
    raise UsageError(f"--log {path}: not a log format capture reads (its first line, of {len(first.strip())} "
                     "characters, starts no slow, general, stderr or csvlog entry)",
                     "give a MariaDB/MySQL slow log (long_query_time=0) or general log, or a PostgreSQL stderr "
                     "or csvlog log with log_min_duration_statement=0 (docs/workloads/capture.md)")


def _mysql_slow(lines: Iterable[str]) -> Iterator[Logged]:
    session, seconds, schema, body = "0", None, None, []

    def flush() -> Iterator[Logged]:
        text = "\n".join(body).strip()
        stamp = re.search(r"^SET timestamp=([\d.]+);", text, re.M)
        for statement in (s for s in _split_meta(text) if s):
            yield Logged(session, statement, seconds, schema, float(stamp.group(1)) if stamp else None)

    for raw in lines:
        line = raw.rstrip("\n")
        if line.startswith("# "):
            if body:
                yield from flush()
                body = []
            thread = _SLOW_THREAD.match(line)
            if thread:
                session = thread.group(1) or thread.group(2) or session
                schema = thread.group(3) or schema
            took = _SLOW_TIME.match(line)
            if took:
                seconds = float(took.group(1))
            continue
        if re.match(r"^(/\S+, Version:|Tcp port:|Time\s+Id\s+Command)", line):
            continue
        body.append(line)
    if body:
        yield from flush()


def _split_meta(text: str) -> list[str]:
    """The statements of one slow-log entry without ``SET timestamp=...;`` and ``use db;``."""
    out = []
    for part in re.split(r";\s*\n", text.rstrip().rstrip(";")):
        part = part.strip()
        if not part or re.match(r"^(SET timestamp=|SET insert_id=|SET last_insert_id=|use )", part, re.I):
            continue
        out.append(part)
    return out


def _mysql_general(lines: Iterable[str]) -> Iterator[Logged]:
    current: Logged | None = None
    databases: dict[str, str] = {}
    at: float | None = None
    for raw in lines:
        line = raw.rstrip("\n")
        match = _GENERAL.match(line)
        if match:
            if current is not None:
                yield current
                current = None
            stamp, session, command, argument = match.groups()
            at = _epoch(re.sub(r"\s+", " ", stamp)) if stamp else at  # MariaDB writes it when it changes
            if command == "Init DB":
                databases[session] = argument.strip()
            elif command == "Connect" and " on " in argument:
                databases[session] = argument.split(" on ", 1)[1].split()[0] if argument.split(" on ", 1)[1] else ""
            elif command in ("Query", "Execute"):
                current = Logged(session, argument, None, databases.get(session), at)
        elif current is not None and not re.match(r"^(/\S+, Version:|Tcp port:|Time\s+Id\s+Command)", line):
            current.text += "\n" + line
    if current is not None:
        yield current


def _fill(statement: str, detail: str) -> str:
    """A PostgreSQL statement with its bound parameters (``DETAIL: parameters: $1 = '42'``) filled in."""
    values = {int(n): v for n, v in _PG_PARAM.findall(detail)}
    return re.sub(r"\$(\d+)\b", lambda m: values.get(int(m.group(1)), m.group(0)), statement)


def _postgres_entries(entries: Iterable[tuple[str, str, str, str | None, float | None]]) -> Iterator[Logged]:
    """(session, level, message, database, logged at) entries -> statements, DETAIL parameters applied; a
    statement started its duration before it was logged."""
    pending: Logged | None = None
    for session, level, message, database, logged_at in entries:
        if level == "DETAIL" and pending is not None and message.startswith("parameters:"):
            pending.text = _fill(pending.text, message)
            continue
        if pending is not None:
            yield pending
            pending = None
        if level != "LOG":
            continue
        took = _PG_DURATION.match(message)
        plain = _PG_STATEMENT.match(message)
        if took:
            seconds = float(took.group(1)) / 1000
            start = logged_at - seconds if logged_at is not None else None
            pending = Logged(session, took.group(2).strip(), seconds, database, start)
        elif plain:
            pending = Logged(session, plain.group(1).strip(), None, database, logged_at)
    if pending is not None:
        yield pending


def _postgres_stderr(lines: Iterable[str]) -> Iterator[Logged]:
    def entries() -> Iterator[tuple[str, str, str, str | None, float | None]]:
        current: list[str] | None = None
        at: float | None = None
        for raw in lines:
            line = raw.rstrip("\n")
            match = _PG_LINE.match(line)
            if match and not line.startswith("\t"):
                if current is not None:
                    yield current[0], current[1], current[2], None, at
                pid = _PG_PID.search(match.group("prefix"))
                stamp = re.match(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)", match.group("prefix"))
                at = _epoch(stamp.group(1)) if stamp else None
                current = [pid.group(1) if pid else "0", match.group("level"), match.group("msg")]
            elif current is not None:
                current[2] += "\n" + line.removeprefix("\t")
        if current is not None:
            yield current[0], current[1], current[2], None, at

    yield from _postgres_entries(entries())


def _postgres_csv(handle: Iterable[str]) -> Iterator[Logged]:
    def entries() -> Iterator[tuple[str, str, str, str | None, float | None]]:
        for row in csv.reader(handle):
            if len(row) < 15:
                continue
            session, level, message, detail, database = row[5] or row[3], row[11], row[13], row[14], row[2]
            at = _epoch(row[0])
            yield session, level, message, database or None, at
            if detail:
                yield session, "DETAIL", detail, database or None, at

    yield from _postgres_entries(entries())


def stream_log(path: Path, skipped: Counter[str] | None = None) -> tuple[str, Iterator[Logged]]:
    """(format, statements) of a log file, the statements read line by line as they are consumed. Statements that
    carry credentials (:mod:`tdebench.sqltext.credentials`) are left out, counted by kind in ``skipped``."""
    kind = detect(path)
    reader = {"mysql-slow": _mysql_slow, "mysql-general": _mysql_general, "postgres-stderr": _postgres_stderr,
              "postgres-csv": _postgres_csv}[kind]
    counts: Counter[str] = skipped if skipped is not None else Counter()

    def statements() -> Iterator[Logged]:
        newline = "" if kind == "postgres-csv" else None
        with open(path, encoding="utf-8", errors="replace", newline=newline) as handle:
            yield from without_credentials((s for s in reader(handle) if s.text.strip()), counts)

    return kind, statements()


def no_statements(path: Path, kind: str) -> UsageError:
    return UsageError(f"--log {path}: a {kind} log without a single statement",
                      "log every statement during the capture window (docs/workloads/capture.md)")


def read_log(path: Path) -> tuple[str, list[Logged]]:
    """(format, statements) of a log file, all in a list (small logs, tests); credentials left out."""
    skipped: Counter[str] = Counter()
    kind, statements = stream_log(path, skipped)
    found = list(statements)
    if not found and not skipped:
        raise no_statements(path, kind)
    return kind, found
