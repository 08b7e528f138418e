"""The logged sessions of a replay, each on its own connection, run segment by segment.

A segment is the calls of every session logged in one window of the log's time (``slice`` seconds of it,
:func:`segments_of`); the whole log is one segment for a continuous replay. :meth:`SessionPool.run_segment`
releases every session with its calls of that segment and waits until the last has finished: the segment's wall
time. Inside a segment each session runs its calls in their order with their think times, all sessions at once;
at a segment's end every session waits for the others, so no statement overlaps a boundary.
"""

from __future__ import annotations

import math
import time

from tdebench.api.trial import ConfigState
from tdebench.encryption import redact
from tdebench.workloads.replay.calls import Call, LogPlan
from tdebench.workloads.sql import answer_check as answers
from tdebench.workloads.sql.gated import GatedPool, GatedThread
from tdebench.workloads.sql.steps import begin, rollback



def segments_of(log: LogPlan, seconds: float | None) -> list[list[Call]]:
    """The log's calls cut into windows of ``seconds`` of its time stamps (in log order; empty windows left out);
    one segment when ``seconds`` is None or a call has no time stamp."""
    calls = log.calls
    if not seconds or not calls or any(c.at is None for c in calls):
        return [list(calls)]
    first = min(c.at for c in calls if c.at is not None)
    windows: dict[int, list[Call]] = {}
    for call in calls:
        assert call.at is not None
        windows.setdefault(math.floor((call.at - first) / seconds), []).append(call)
    return [windows[k] for k in sorted(windows)]


class _Session(GatedThread):
    """One logged session replayed on its own connection, segment after segment."""

    def __init__(self, pool: "SessionPool", calls: list[Call]) -> None:
        super().__init__(pool, f"tdebench-replay-{calls[0].session if calls else ''}"[:60])
        self.replay, self.calls = pool, calls
        self.segment: set[int] = set()
        self.latency: dict[int, float] = {}
        self.errors: dict[int, str] = {}
        self.rows: dict[int, str] = {}
        self.done_inserts: list[tuple[int, str]] = []  # (log position, its undo)

    def work(self) -> None:
        for call in self.calls:
            if call.position in self.segment:
                self._call(call)

    def _call(self, call: Call) -> None:
        if self.replay.factor and call.think > 0:
            time.sleep(call.think / self.replay.factor)
        conn, dialect = self.conn, self.replay.state.dialect
        started = time.perf_counter()
        try:
            if call.kind == "write":
                begin(conn, dialect)
            cur = conn.cursor()
            cur.execute(self.replay.texts[call.position])
            rows = cur.fetchall() if call.kind == "query" else []
            if dialect.autocommit and call.kind == "write":
                cur.execute("COMMIT")
            else:
                conn.commit()
        except Exception as exc:  # noqa: BLE001 - recorded per statement, the session goes on
            rollback(conn, dialect)
            self.latency[call.position] = time.perf_counter() - started
            self.errors[call.position] = f"{type(exc).__name__}: {redact(str(exc)).splitlines()[0] if str(exc) else ''}"
            return
        self.latency[call.position] = time.perf_counter() - started
        if call.kind == "query":
            self.rows[call.position] = answers.digest(answers.normalize(rows))
        elif call.undo:
            self.done_inserts.append((call.position, call.undo))


class SessionPool(GatedPool):
    """Every session of the log connected to one config's server, ready to run segments."""

    def __init__(self, state: ConfigState, log: LogPlan, texts: dict[int, str], factor: float | None) -> None:
        super().__init__(state)
        self.texts, self.factor = texts, factor
        self.sessions = [_Session(self, calls) for calls in log.sessions.values()]
        self.start(list(self.sessions), "replay: a session")

    def run_segment(self, calls: list[Call]) -> float:
        """Every session runs its calls among ``calls``; the wall seconds until the last has finished."""
        positions = {c.position for c in calls}
        started = time.perf_counter()
        for session in self.sessions:
            session.segment = positions
        self.release()
        self.wait(None, "")
        return time.perf_counter() - started

    def merged(self) -> tuple[dict[int, float], dict[int, str], dict[int, str], list[str]]:
        """(latency, errors, rows, undo statements) of every session so far; the undo in the reverse order of the
        log, so that a child row (an order's lines) goes before the parent it references."""
        s = self.sessions
        undo = sorted((x for session in s for x in session.done_inserts), reverse=True)
        return ({p: v for x in s for p, v in x.latency.items()}, {p: e for x in s for p, e in x.errors.items()},
                {p: r for x in s for p, r in x.rows.items()}, [u for _, u in undo])
