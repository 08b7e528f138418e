"""One trial of one config: the power test (RF1, stream 0, RF2) and/or the throughput test, plus metrics."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.api.trial import Recorder, TrialResult
from tdebench.encryption import redact
from tdebench.workloads.tpch import answers, metrics
from tdebench.workloads.tpch.power import StreamResult, run_stream
from tdebench.workloads.tpch.refresh import RefreshSet, RefreshTiming, apply_rf1, apply_rf2
from tdebench.workloads.tpch.throughput import run_throughput


@dataclass
class TrialPlan:
    """What one trial runs: tests, streams, and the update sets it owns (never reused by another trial)."""

    tests: tuple[str, ...]
    sf: float
    streams: int
    power_set: RefreshSet | None
    throughput_sets: list[RefreshSet]
    query_timeout: float = 0.0
    mark: Callable[[str | None], None] | None = None  # attributes server resources to steps
    queries: tuple[int, ...] = ()  # a subset of the power test's queries (empty: all 22)


def _record_stream(rec: Recorder, test: str, result: StreamResult, out: TrialResult) -> None:
    for run in result.runs:
        rec.add(test, f"q{run.number:02d}", "elapsed", run.seconds, "s", result.stream)
    for number, error in result.failures.items():
        rec.add(test, f"q{number:02d}", "elapsed", float("nan"), "s", result.stream, status="failed")
        out.failures.append(f"{test} stream {result.stream} q{number:02d}: {redact(error)}")
    for number, limit in result.timeouts.items():
        rec.add(test, f"q{number:02d}", "elapsed", limit, "s", result.stream, status="timeout")
        out.failures.append(f"{test} stream {result.stream} q{number:02d}: timed out after {limit:g} s")
        out.timeouts += 1
    status = None if result.ok else "failed"
    rec.add(test, "total", "elapsed", sum(r.seconds for r in result.runs), "s", result.stream, status=status)


def _record_refresh(rec: Recorder, test: str, timing: RefreshTiming, step: str, stream: int | None) -> None:
    rec.add(test, step, "elapsed", timing.seconds, "s", stream)
    rec.add(test, step, "rows", timing.orders + max(timing.lineitems, 0), "rows", stream)


def run_refresh(instance: Instance, dialect: Dialect, plan: TrialPlan, rec: Recorder, step: str) -> RefreshTiming:
    """RF1 or RF2 (``step`` "rf1"/"rf2") of the power test's update set, in a session of its own, marked as a step."""
    assert plan.power_set is not None
    conn = instance.connect()
    try:
        if plan.mark:
            plan.mark(step)
        timing = (apply_rf1 if step == "rf1" else apply_rf2)(conn, dialect, plan.power_set)
    finally:
        if plan.mark:
            plan.mark(None)
        conn.close()
    _record_refresh(rec, "power", timing, step, 0)
    return timing


def record_power(rec: Recorder, plan: TrialPlan, stream: StreamResult, out: TrialResult,
                 rf1: RefreshTiming | None, rf2: RefreshTiming | None) -> None:
    """The power stream's rows and answer digest; Power@Size when everything succeeded."""
    _record_stream(rec, "power", stream, out)
    out.answer_digest = {run.number: _digest(run.rows) for run in stream.runs}
    if stream.ok and rf1 is not None and rf2 is not None and not plan.queries:  # Power@Size needs all 22
        times = {run.number: run.seconds for run in stream.runs}
        power = metrics.power_at_size(times, rf1.seconds, rf2.seconds, plan.sf)
        rec.add("power", "power_at_size", "power_at_size", power, "qph")


def run_power(instance: Instance, dialect: Dialect, plan: TrialPlan, rec: Recorder, out: TrialResult) -> None:
    """RF1, stream 0, RF2 in one session each; Power@Size when everything succeeded."""
    rf1 = rf2 = None
    if plan.power_set is not None:
        rf1 = run_refresh(instance, dialect, plan, rec, "rf1")
    stream = run_stream(instance, dialect, plan.sf, 0, query_timeout=plan.query_timeout, mark=plan.mark,
                        queries=plan.queries)
    if plan.power_set is not None:
        rf2 = run_refresh(instance, dialect, plan, rec, "rf2")
        out.sets_applied.append(plan.power_set)
    record_power(rec, plan, stream, out, rf1, rf2)


def run_throughput_test(instance: Instance, dialect: Dialect, plan: TrialPlan, rec: Recorder, out: TrialResult) -> None:
    """S query streams and the refresh stream in parallel; Throughput@Size from Ts."""
    if plan.mark:
        plan.mark("throughput")
    result = run_throughput(instance, dialect, plan.sf, plan.streams, plan.throughput_sets, plan.query_timeout)
    if plan.mark:
        plan.mark(None)
    for stream in result.streams:
        _record_stream(rec, "throughput", stream, out)
    for i, timing in enumerate(result.refreshes):
        _record_refresh(rec, "throughput", timing, f"{timing.function.lower()}_{i // 2 + 1}", None)
    applied = {t.update_set for t in result.refreshes if t.function == "RF2"}
    out.sets_applied.extend(rs for rs in plan.throughput_sets if rs.update_set in applied)
    if result.refresh_error:
        out.failures.append(f"throughput refresh stream: {redact(result.refresh_error)}")
    status = None if result.ok else "failed"
    rec.add("throughput", "ts", "elapsed", result.ts_seconds, "s", status=status)
    if result.ok:
        value = metrics.throughput_at_size(plan.streams, result.ts_seconds, plan.sf)
        rec.add("throughput", "throughput_at_size", "throughput_at_size", value, "qph")


def run_trial(instance: Instance, dialect: Dialect, plan: TrialPlan, rec: Recorder) -> TrialResult:
    """Run the selected tests in spec order (power, then throughput) and QphH@Size when both ran."""
    out = TrialResult()
    if "power" in plan.tests:
        run_power(instance, dialect, plan, rec, out)
    finish_trial(instance, dialect, plan, rec, out)
    return out


def finish_trial(instance: Instance, dialect: Dialect, plan: TrialPlan, rec: Recorder, out: TrialResult) -> None:
    """After the power test: the throughput test (when selected) and QphH@Size when both ran."""
    if "throughput" in plan.tests:
        run_throughput_test(instance, dialect, plan, rec, out)
    values = {r.step: r.value for r in rec.rows if r.status in ("ok", "warmup")}
    if "power_at_size" in values and "throughput_at_size" in values:
        qphh = metrics.qphh_at_size(values["power_at_size"], values["throughput_at_size"])
        rec.add("throughput", "qphh_at_size", "qphh_at_size", qphh, "qph")


def _digest(rows: list[tuple]) -> str:
    text = "\n".join("|".join(answers.normalize_row(r)) for r in rows)
    return hashlib.sha256(text.encode()).hexdigest()
