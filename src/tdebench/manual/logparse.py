"""Read a console log into per-stream, per-query results.

Rules (the same for every client):

* a query's time is the sum of every timing line between its begin and end markers (Q15 as a view has three
  statements; SQL Server prints one "Execution Times" per statement); SQL Server's parse-and-compile times are
  summed separately;
* a query with an error between its markers is ``failed``; so is one whose end marker never came (log cut off,
  session lost);
* a query with both markers but no timing line is ``missing`` (timing was off), and so is a query of the
  stream's order that is not in the log at all — never zero;
* timings, errors and warnings outside the markers (stamps, setup statements) are not attributed to a query;
* repeated markers (echoed statements) count once; a begin marker for a query the stream already finished,
  or a new ``stream-begin``, starts a new run of the stream (two runs appended to one log).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tdebench.errors import UsageError
from tdebench.manual.clients import client_for
from tdebench.manual.logscan import Event, decode
from tdebench.workloads.tpch.streams import stream_order


@dataclass
class QueryResult:
    """One query of one stream run."""

    number: int
    stream: int
    line: int = 0
    elapsed: float = 0.0
    cpu: float | None = None
    compile: float | None = None
    statements: int = 0
    ended: bool = False
    present: bool = True
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """``ok``, ``failed`` or ``missing``."""
        if not self.present:
            return "missing"
        if self.errors or not self.ended:
            return "failed"
        return "ok" if self.statements else "missing"

    @property
    def reason(self) -> str:
        """Why the query is not ``ok`` ("" when it is)."""
        if not self.present:
            return "not in the log"
        if self.errors:
            return self.errors[0]
        if not self.ended:
            return "no end marker (log cut off or session lost)"
        return "" if self.statements else "no timing line between the markers (was timing on?)"


@dataclass
class StreamRun:
    """One execution of one query stream found in a log."""

    stream: int
    begin: str | None = None
    end: str | None = None
    header: dict[str, str] = field(default_factory=dict)
    queries: dict[int, QueryResult] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    closed: bool = False

    @property
    def test(self) -> str:
        return "power" if self.stream == 0 else "throughput"

    def results(self) -> list[QueryResult]:
        """The 22 queries in the stream's order; queries not in the log come back as missing."""
        return [self.queries.get(q) or QueryResult(q, self.stream, present=False) for q in stream_order(self.stream)]

    def wall_seconds(self) -> float | None:
        """End stamp minus begin stamp (server clock), if both were printed."""
        if not (self.begin and self.end):
            return None
        return round((datetime.fromisoformat(self.end) - datetime.fromisoformat(self.begin)).total_seconds(), 6)


@dataclass
class ParsedLog:
    """A log file and the stream runs found in it."""

    name: str
    sha256: str
    size: int
    runs: list[StreamRun]
    timings: int
    notes: list[str]


class _Builder:
    def __init__(self) -> None:
        self.runs: list[StreamRun] = []
        self.run: StreamRun | None = None
        self.open: QueryResult | None = None
        self.header: dict[str, str] | None = None
        self.notes: list[str] = []
        self.timings = 0

    def _new_run(self, stream: int) -> StreamRun:
        self._close_query()
        run = StreamRun(stream)
        if self.header and self.header.get("stream", str(stream)) == str(stream):
            run.header, self.header = self.header, None
        self.runs.append(run)
        self.run = run
        return run

    def _close_query(self) -> None:
        if self.open is not None and self.run is not None:
            self.run.queries[self.open.number] = self.open
        self.open = None

    def feed(self, ev: Event) -> None:
        handler = getattr(self, "_on_" + ev.kind.replace("-", "_"))
        handler(ev)

    def _on_header(self, ev: Event) -> None:
        info = ev.info or {}
        run = self.run
        if run is not None and not run.queries and self.open is None and str(run.stream) == info.get("stream"):
            run.header = info
        else:
            self.header = info

    def _on_stream_begin(self, ev: Event) -> None:
        run = self.run
        if run is not None and run.stream == ev.stream and run.begin == ev.text:
            return  # the same stamp printed twice
        if run is None or run.stream != ev.stream or run.queries or run.closed or self.open or run.begin:
            run = self._new_run(int(ev.stream or 0))
        run.begin = ev.text

    def _on_stream_end(self, ev: Event) -> None:
        if self.run is None or self.run.stream != ev.stream:
            self.notes.append(f"line {ev.line}: stream-end {ev.stream} without its stream-begin; ignored")
            return
        self._close_query()
        self.run.end = self.run.end or ev.text
        self.run.closed = True

    def _on_begin(self, ev: Event) -> None:
        number, stream = int(ev.query or 0), int(ev.stream or 0)
        same = self.open is not None and (self.open.number, self.open.stream) == (number, stream)
        if same and self.open is not None and not self.open.statements and not self.open.errors:
            return  # the marker echoed (sqlcmd -e, SQL*Plus ECHO, mysql -vvv): nothing ran in between
        if not 1 <= number <= 22:
            self.notes.append(f"line {ev.line}: marker for unknown query q{number:02d}; ignored")
            return
        self._close_query()
        run = self.run
        if run is None or run.stream != stream or run.closed or number in run.queries:
            self._new_run(stream)
        self.open = QueryResult(number, stream, line=ev.line)

    def _on_end(self, ev: Event) -> None:
        number, stream = int(ev.query or 0), int(ev.stream or 0)
        if self.open is not None and (self.open.number, self.open.stream) == (number, stream):
            self.open.ended = True
            self._close_query()
        elif self.run is None or number not in self.run.queries:
            self.notes.append(f"line {ev.line}: end marker of q{number:02d} stream {stream} without a begin; ignored")

    def _on_exec(self, ev: Event) -> None:
        self.timings += 1
        if self.open is None:
            return
        self.open.statements += 1
        self.open.elapsed += ev.seconds or 0.0
        if ev.cpu is not None:
            self.open.cpu = (self.open.cpu or 0.0) + ev.cpu

    def _on_compile(self, ev: Event) -> None:
        if self.open is not None:
            self.open.compile = (self.open.compile or 0.0) + (ev.seconds or 0.0)

    def _on_error(self, ev: Event) -> None:
        self._message(ev, "error", keep_before_first=True)

    def _on_warning(self, ev: Event) -> None:
        self._message(ev, "warning", keep_before_first=False)

    def _message(self, ev: Event, kind: str, keep_before_first: bool) -> None:
        """An error or warning: on the open query (its ``errors``/``warnings``), else a note of the stream run,
        else (errors only) a note of the log."""
        text = f"line {ev.line}: {ev.text}"
        if self.open is not None:
            getattr(self.open, kind + "s").append(text)
        elif self.run is not None:
            self.run.notes.append(f"{kind} outside any query: {text}")
        elif keep_before_first:
            self.notes.append(f"{kind} before the first query: {text}")

    def finish(self) -> list[StreamRun]:
        self._close_query()
        for run in self.runs:
            for result in run.queries.values():
                result.elapsed = round(result.elapsed, 6)
                result.cpu = None if result.cpu is None else round(result.cpu, 6)
                result.compile = None if result.compile is None else round(result.compile, 6)
        return self.runs


def parse_text(dialect: str, lines: list[str]) -> tuple[list[StreamRun], int, list[str]]:
    """Stream runs, number of timing lines and notes of a log's lines."""
    builder = _Builder()
    for event in client_for(dialect).scanner(lines):
        builder.feed(event)
    return builder.finish(), builder.timings, builder.notes


def parse_log(path: Path, dialect: str) -> ParsedLog:
    """Read and parse one log file; UsageError if it cannot be read or holds no tdebench markers."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read log {path}: {exc.strerror or exc}", "pass the console logs to import")
    runs, timings, notes = parse_text(dialect, decode(data))
    if not runs:
        raise UsageError(f"no tdebench markers in {path.name}",
                         "import logs of scripts written by `tdebench script` (their tdebench: lines are the markers)")
    return ParsedLog(path.name, hashlib.sha256(data).hexdigest(), len(data), runs, timings, notes)
