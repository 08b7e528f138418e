"""``--workload replay``: every twin loads the directory's schema and data (as ``--workload sql`` does, which it
builds on: the directory's queries are validated too), then each trial replays the log: one connection per
logged session, its statements in their order with their think times (``speed``), all sessions at once. The same
statements run on every twin.

Under ``--schedule query`` (the default) the replay is interleaved across the twins: every config's sessions stay
connected for the block, and the log is cut into segments of ``slice`` seconds of its time stamps (default 1 s;
:func:`tdebench.workloads.replay.sessions.segments_of`); in each round one segment is replayed on every config in a
fresh random order, so twins replay the same part of the log seconds apart. One block is one whole replay per
config; its wall time is the sum of its segments'. Under ``--schedule block`` a trial replays the whole log at once.

Recorded per trial, test ``replay``: per digest (statements of one normalized form, ``dNN_<table>``) the sum of
its latencies (``elapsed``, paired with the plain twin like every step) and its ``latency_p50/p95/p99``, and the
statements that failed (``failed``); ``total``: the wall time of the whole replay, and the sessions and statements
replayed. Headlines: the wall time (``wall``), then every digest's latency (by its name). Answers: with one session,
or no writes, the rows of every read and the outcome (ok/failed) of every statement are compared with the plain
twin's, so a statement that fails on one twin and not the other is a difference. After the trial the rows the log's
INSERTs added are deleted again (untimed).
"""

from __future__ import annotations

from typing import Any

from tdebench.api.plan import RunPlan
from tdebench.api.presentation import Headline
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import RunFiles, SteppedTrial
from tdebench.encryption import redact
from tdebench.workloads.replay.calls import LogPlan
from tdebench.workloads.replay.options import ReplayOptions
from tdebench.workloads.replay.sessions import SessionPool, segments_of
from tdebench.workloads.sql import portable
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
        self.segments = segments_of(self.log, self.options.slice)

    @staticmethod
    def _options(raw: dict[str, Any]) -> Any:
        return ReplayOptions.parse(raw)

    def describe(self) -> str:
        return (f"replay {self.options.log} ({len(self.log.sessions)} sessions, {len(self.log.calls)} statements, "
                f"{len(self.log.digests)} digests, speed {self.options.speed}) on {self.wd.root.name}")

    def plan_json(self) -> dict[str, Any]:
        return {**super().plan_json(), "log": str(self.options.log), "log_format": self.log.fmt,
                "speed": self.options.speed, "sessions": len(self.log.sessions), "statements": len(self.log.calls),
                "segment_s": self.options.slice, "segments": len(self.segments),
                "skipped_statements": self.log.skipped, "think_times": self.log.timed,
                "answers_compared": self.compare, "digests": self.log.digests}

    def headlines(self) -> tuple[Headline, ...]:
        """The replay's wall time, then every digest's latency (the sum over its statements)."""
        counts: dict[str, int] = {}
        for call in self.log.calls:
            counts[call.digest] = counts.get(call.digest, 0) + 1
        return (Headline("wall", TEST, "total", "elapsed", "wall time of the replay"),
                *(Headline(name, TEST, name, "elapsed", f"{name}: latency of its {counts.get(name, 0)} statements")
                  for name in self.log.digests))

    def headline(self) -> tuple[str, str, str] | None:
        return (TEST, "total", "elapsed")

    def stepped_trial(self, state: ConfigState, block: int, rec: Recorder, repeat: int) -> SteppedTrial | None:
        """The log segment by segment, interleaved across the twins (:class:`ReplaySteps`)."""
        rec.workload = self.name
        return ReplaySteps(self, state, rec, self.segments)

    def schedule_facts(self) -> dict[str, Any]:
        return {"segment_s": self.options.slice, "segments": len(self.segments),
                "pairing_unit": "the block: one whole replay per config, its segments interleaved across the configs"}

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
        result = TrialResult()
        try:
            pool = SessionPool(state, self.log, self._texts_for(state.dialect.family), self.factor)
        except RuntimeError as exc:
            result.failures.append(str(exc))
            return result
        try:
            wall = pool.run_segment(self.log.calls)
        finally:
            pool.close()
        self.record(rec, result, pool, wall)
        return result

    def record(self, rec: Recorder, result: TrialResult, pool: SessionPool, wall: float) -> None:
        """One replay's figures (its sessions' latencies and errors, and its wall time), then its INSERTs undone."""
        latency, errors, rows, undo = pool.merged()
        for name in self.log.digests:
            mine = [c.position for c in self.log.calls if c.digest == name]
            values = [latency[p] for p in mine if p in latency and p not in errors]
            rec.add(TEST, name, "elapsed", sum(values) if values else float("nan"), "s",
                    status=None if values else "failed")
            for q in (50, 95, 99):
                rec.add(TEST, name, f"latency_p{q}", percentile(values, q / 100), "s")
            rec.add(TEST, name, "failed", sum(p in errors for p in mine), "statements")
        rec.add(TEST, "total", "elapsed", wall, "s")
        rec.add(TEST, "total", "sessions", len(pool.sessions), "sessions")
        rec.add(TEST, "total", "statements", len(latency), "statements")
        rec.add(TEST, "total", "failed", len(errors), "statements")
        if self.compare:
            for call in self.log.calls:
                outcome = "failed" if call.position in errors else rows.get(call.position, "ok")
                result.answer_digest[call.position] = outcome
        self.last_errors = errors
        self._undo_inserts(pool.state, undo, result)

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


class ReplaySteps(SteppedTrial):
    """One config's replay of one block, one segment per round (step ``replay``)."""

    steps = ("replay",)

    def __init__(self, owner: ReplayWorkload, state: ConfigState, rec: Recorder, segments: list) -> None:
        self.owner, self.state, self.rec, self.segments = owner, state, rec, segments
        self.rounds = len(segments)
        self.pool: SessionPool | None = None
        self.wall = 0.0
        self.result = TrialResult()

    def begin(self) -> None:
        self.pool = SessionPool(self.state, self.owner.log, self.owner._texts_for(self.state.dialect.family),
                                self.owner.factor)

    def run_step(self, step: str, repetition: int) -> None:
        assert self.pool is not None
        self.state.mark(step)
        try:
            self.wall += self.pool.run_segment(self.segments[repetition])
        finally:
            self.state.mark(None)
        if not self.state.instance.alive():
            raise RuntimeError(f"the server of {self.state.label} died during the replay")

    def finish(self) -> TrialResult:
        assert self.pool is not None
        pool = self.pool
        self.abort()
        self.owner.record(self.rec, self.result, pool, self.wall)
        return self.result

    def abort(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.close()
