"""``--workload replay``: every twin loads the directory's schema and data (as ``--workload sql`` does, which it
builds on: the directory's queries are validated too), then each trial replays the log: one connection per
logged session, its statements in their order with their think times (``speed``), all sessions at once. The same
statements run on every twin.

Recorded per trial, test ``replay``: per digest (statements of one normalized form, ``dNN_<table>``) the sum of
its latencies (``elapsed``, paired with the plain twin like every step) and its ``latency_p50/p95/p99``, and the
statements that failed (``failed``); ``total``: the wall time of the whole replay, and the sessions and statements
replayed. Answers: with one session, or no writes, the rows of every read and the outcome (ok/failed) of every
statement are compared with the plain twin's, so a statement that fails on one twin and not the other is a
difference. After the trial the rows the log's INSERTs added are deleted again (untimed).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tdebench.api.plan import RunPlan
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import RunFiles
from tdebench.encryption import redact
from tdebench.workloads.replay.calls import Call, LogPlan
from tdebench.workloads.replay.options import ReplayOptions
from tdebench.workloads.sql import answer_check as answers, portable
from tdebench.workloads.sql.steps import begin, rollback
from tdebench.workloads.sql.workload import SqlWorkload
from tdebench.workloads.replay.presentation import PRESENTATION

TEST = "replay"


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation, as numpy's default."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class _Session(threading.Thread):
    """One logged session replayed on its own connection."""

    def __init__(self, state: ConfigState, calls: list[Call], texts: dict[int, str], factor: float | None,
                 start: threading.Barrier) -> None:
        super().__init__(daemon=True)
        self.state, self.calls, self.texts, self.factor, self.start_gate = state, calls, texts, factor, start
        self.latency: dict[int, float] = {}
        self.errors: dict[int, str] = {}
        self.rows: dict[int, str] = {}
        self.done_inserts: list[str] = []
        self.problem: BaseException | None = None

    def run(self) -> None:
        try:
            conn = self.state.instance.connect()
        except BaseException as exc:  # noqa: BLE001 - said by the trial
            self.problem = exc
            self.start_gate.abort()
            return
        try:
            self.start_gate.wait()
            for call in self.calls:
                if self.factor and call.think > 0:
                    time.sleep(call.think / self.factor)
                self._one(conn, call)
        except threading.BrokenBarrierError:
            pass
        finally:
            conn.close()

    def _one(self, conn: Any, call: Call) -> None:
        dialect = self.state.dialect
        started = time.perf_counter()
        try:
            if call.kind == "write":
                begin(conn, dialect)
            cur = conn.cursor()
            cur.execute(self.texts[call.position])
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
            self.done_inserts.append(call.undo)


class ReplayWorkload(SqlWorkload):
    """The directory's schema and data, and the log replayed on them."""

    name = "replay"
    shown = PRESENTATION

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.log: LogPlan = self.options.plan
        self.factor = self.options.factor
        self.compare = len(self.log.sessions) == 1 or not any(c.kind == "write" for c in self.log.calls)
        self._texts: dict[str, dict[int, str]] = {}

    @staticmethod
    def _options(raw: dict[str, Any]) -> Any:
        return ReplayOptions.parse(raw)

    def describe(self) -> str:
        return (f"replay {self.options.log} ({len(self.log.sessions)} sessions, {len(self.log.calls)} statements, "
                f"{len(self.log.digests)} digests, speed {self.options.speed}) on {self.wd.root.name}")

    def plan_json(self) -> dict[str, Any]:
        return {**super().plan_json(), "log": str(self.options.log), "log_format": self.log.fmt,
                "speed": self.options.speed, "sessions": len(self.log.sessions), "statements": len(self.log.calls),
                "skipped_statements": self.log.skipped, "think_times": self.log.timed,
                "answers_compared": self.compare, "digests": self.log.digests}

    def headline(self) -> tuple[str, str, str] | None:
        return (TEST, "total", "elapsed")

    def _texts_for(self, family: str) -> dict[int, str]:
        """Every call's text in ``family``'s SQL (rewritten from the directory's dialect once per family)."""
        if family not in self._texts:
            source = self.wd.settings.dialect
            dates = portable.date_columns(self.wd.info.tables)
            unique = {c.text for c in self.log.calls}
            done = {t: portable.translate([t], source, family, dates)[0] for t in unique}
            self._texts[family] = {c.position: done[c.text] for c in self.log.calls}
        return self._texts[family]

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        rec.workload = self.name
        texts = self._texts_for(state.dialect.family)
        gate = threading.Barrier(len(self.log.sessions) + 1)
        sessions = [_Session(state, calls, texts, self.factor, gate) for calls in self.log.sessions.values()]
        for session in sessions:
            session.start()
        result = TrialResult()
        try:
            gate.wait(timeout=60)
        except threading.BrokenBarrierError:
            problem = next((s.problem for s in sessions if s.problem), None)
            result.failures.append(f"replay: a session could not connect: {redact(str(problem))}")
            return result
        started = time.perf_counter()
        for session in sessions:
            session.join()
        wall = time.perf_counter() - started
        self._record(rec, result, sessions, wall)
        self._undo_inserts(state, [u for s in sessions for u in s.done_inserts], result)
        return result

    def _record(self, rec: Recorder, result: TrialResult, sessions: list[_Session], wall: float) -> None:
        latency = {p: v for s in sessions for p, v in s.latency.items()}
        errors = {p: e for s in sessions for p, e in s.errors.items()}
        rows = {p: r for s in sessions for p, r in s.rows.items()}
        for name in self.log.digests:
            mine = [c.position for c in self.log.calls if c.digest == name]
            values = [latency[p] for p in mine if p in latency and p not in errors]
            rec.add(TEST, name, "elapsed", sum(values) if values else float("nan"), "s",
                    status=None if values else "failed")
            for q in (50, 95, 99):
                rec.add(TEST, name, f"latency_p{q}", percentile(values, q / 100), "s")
            rec.add(TEST, name, "failed", sum(p in errors for p in mine), "statements")
        rec.add(TEST, "total", "elapsed", wall, "s")
        rec.add(TEST, "total", "sessions", len(sessions), "sessions")
        rec.add(TEST, "total", "statements", len(latency), "statements")
        rec.add(TEST, "total", "failed", len(errors), "statements")
        if self.compare:
            for call in self.log.calls:
                outcome = "failed" if call.position in errors else rows.get(call.position, "ok")
                result.answer_digest[call.position] = outcome
        self.last_errors = errors

    def _undo_inserts(self, state: ConfigState, undo: list[str], result: TrialResult) -> None:
        """Delete the rows the log's INSERTs added in this trial (untimed)."""
        if not undo:
            return
        family = state.dialect.family
        dates = portable.date_columns(self.wd.info.tables)
        conn = state.instance.connect()
        try:
            begin(conn, state.dialect)
            cur = conn.cursor()
            for statement in portable.translate(undo, self.wd.settings.dialect, family, dates):
                cur.execute(statement)
            if state.dialect.autocommit:
                cur.execute("COMMIT")
            else:
                conn.commit()
        except Exception as exc:  # noqa: BLE001
            rollback(conn, state.dialect)
            result.failures.append(f"replay: deleting the rows the log's INSERTs added failed: {redact(str(exc))}")
        finally:
            conn.close()
