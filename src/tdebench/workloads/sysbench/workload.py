"""sysbench as an independent second OLTP driver (MariaDB and PostgreSQL), parsed into tdebench's measurements.

The load is ``sysbench <first test> prepare`` (tables ``sbtest1..N``); every trial runs each test in
``tests`` at each thread count in ``vus`` for ramp-up + duration. Measurements (test = the sysbench test,
e.g. ``oltp_read_write``; step ``vuN``): ``tps``, ``qps``, ``tpm`` (tps x 60, so the TPM-vs-users chart and
verdicts work as for tpcc) and ``server_cpu_per_txn`` (server CPU seconds of the measured window /
transactions); step ``vuN.all``: ``reads``/``writes``/``other`` (queries per second by kind), ``transactions``,
``latency_p50``/``latency_p95``/``latency_p99`` (from sysbench's histogram), ``latency_avg``, ``latency_min``,
``latency_max`` (s), ``errors`` (sysbench's ignored errors: deadlocks, lock wait timeouts) and ``reconnects``.
The per-second lines go to ``samples/<config>/sysbench-block<NNN>-<test>-vu<N>.csv``.

With the interleaved schedule (``--schedule query``, the default with a warm cache) these values are recorded once
per slice with its ``round`` (:mod:`tdebench.workloads.sysbench.slices`), with ``vuN.all/server_cpu_while_paused``
and the engine's counters per transaction in step ``vuN.per_txn`` (:mod:`tdebench.workloads.slicing`); a slice's
latency percentiles are those of the transactions that started and ended inside it, its ``qps`` and queries by
kind those of the test's statement mix (:data:`tdebench.workloads.sysbench.gated.MIX`), and one line per slice goes
to ``samples/<config>/sysbench-block<NNN>-<test>-vu<N>-slices.csv``.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.presentation import Presentation
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import Need, RunFiles
from tdebench.errors import EnvironmentProblem, UsageError
from tdebench.workloads.sysbench import runner
from tdebench.workloads.sysbench.accounts import sysbench_account
from tdebench.workloads.sysbench.options import parse_options
from tdebench.workloads.sysbench.output import Report
from tdebench.workloads.slicing import SlicedWorkload, precision_series
from tdebench.workloads.sysbench.slices import SlicedSysbenchTrial
from tdebench.workloads.tpcc.workload import server_cpu
from tdebench.workloads.sysbench.presentation import PRESENTATION, presentation

PROTOCOLS = ("mysql", "postgres")  # the servers sysbench has drivers for


def record_report(rec: Recorder, test: str, threads: int, report: Report, round: int | None = None) -> None:
    """The measurements of one sysbench step, or of one slice of it in ``round`` (names in the module
    docstring)."""
    step, details = f"vu{threads}", f"vu{threads}.all"

    def add(sub: str, metric: str, value: float, unit: str) -> None:
        rec.add(test, sub, metric, value, unit, round=round)

    add(step, "tps", report.tps, "tps")
    add(step, "qps", report.qps, "qps")
    add(step, "tpm", report.tps * 60, "tpm")
    window = report.transactions / report.tps if report.tps else 0.0
    for name in ("reads", "writes", "other"):
        add(details, name, getattr(report, name) / window if window else 0.0, "qps")
    add(details, "transactions", report.transactions, "txn")
    add(details, "errors", report.errors, "count")
    add(details, "reconnects", report.reconnects, "count")
    for key, value in sorted(report.latency.items()):
        add(details, f"latency_{key}", value, "s")


def write_series(path: Path, report: Report, rampup: float) -> Path:
    """The per-second lines of one step as CSV."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["second", "phase", "threads", "tps", "qps", "reads_per_s", "writes_per_s", "other_per_s",
                      "latency_pct", "latency_ms", "errors_per_s", "reconnects_per_s"])
        for i in report.intervals:
            out.writerow([i.second, "rampup" if i.second <= rampup else "measured", i.threads, i.tps, i.qps, i.reads,
                          i.writes, i.other, i.latency_pct, i.latency_ms, i.errors, i.reconnects])
    return path


def append_slice(path: Path, report: Report, round: int, seconds: float) -> Path:
    """One line per slice of the interleaved schedule: its round, length, counts and latency percentiles."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with open(path, "a", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        if new:
            out.writerow(["round", "seconds", "transactions", "tps", "qps", "p50_ms", "p95_ms", "p99_ms", "errors"])
        ms = [round_ms(report.latency.get(f"p{p}")) for p in (50, 95, 99)]
        out.writerow([round, f"{seconds:.4f}", report.transactions, f"{report.tps:.2f}", f"{report.qps:.2f}", *ms,
                      report.errors])
    return path


def round_ms(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1000:.3f}"


class SysbenchWorkload(SlicedWorkload):
    """sysbench oltp_* tests against tdebench's instances; the interleaved schedule gates connected sysbench
    processes slice by slice (:mod:`tdebench.workloads.sysbench.slices`)."""

    name = "sysbench"
    shown = PRESENTATION
    database = "sbtest"
    known_plaintext: tuple[str, ...] = ()  # sysbench's data are random digits: the canaries do the at-rest proof
    sliced_trial = SlicedSysbenchTrial
    pairing_unit = "the round: one slice of every config's connected sysbench process"
    needs = (Need("sysbench reaches only MySQL-protocol and PostgreSQL servers, with its own SQL (not embedded or "
                  "translated engines)", lambda e: e.dialect.protocol in PROTOCOLS and not e.dialect.translated),)

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.opts = parse_options(plan.workload_options, precision=plan.precision is not None)
        self.schema_tables = tuple(f"sbtest{i}" for i in range(1, self.opts.tables + 1))
        self._check_specs()

    def _check_specs(self) -> None:
        for config in self.plan.configs:
            if config.spec.mechanism == "column":
                raise UsageError(f"--workload sysbench cannot measure '{config.spec}': sysbench creates and queries "
                                 "its own tables, which pgcrypto column encryption (decrypting views) does not cover",
                                 "compare none with fs:* on postgres (e.g. --encryption none,fs:gocryptfs), or run "
                                 "--workload tpcc for column:* specs")

    def plan_json(self) -> dict[str, Any]:
        return {"workload": self.name, **self.opts.model_dump()}

    def prepare(self, ui: RunListener) -> dict[str, Any]:
        # ~190 bytes per row (id, k, c CHAR(120), pad CHAR(60)): the disk guard's input estimate
        return {"generator": runner.sysbench_version(), "options": self.plan_json(),
                "raw_bytes": self.opts.tables * self.opts.table_size * 190}

    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        """``sysbench prepare`` with the first test's script, then statistics."""
        rec.workload = self.name
        ui.message(f"sysbench prepare on {state.label}: {self.opts.tables} x {self.opts.table_size} rows")
        threads = max(1, min(self.opts.tables, os.cpu_count() or 1))
        with sysbench_account(state.instance, state.dialect.protocol) as account:
            outcome = runner.prepare(account, self.opts, self.opts.tests[0], threads)
        if outcome.code != 0:
            raise EnvironmentProblem(f"sysbench prepare failed on {state.label}: {outcome.error()}",
                                     "look at the sysbench output above and the server log")
        conn = state.instance.connect()
        try:
            state.instance.analyze(conn)
        finally:
            conn.close()
        rec.add("load", "total", "elapsed", outcome.seconds, "s")
        rec.add("load", "sbtest", "rows", self.opts.tables * self.opts.table_size, "rows")
        return {"load_seconds": round(outcome.seconds, 6), "load_rows": self.opts.tables * self.opts.table_size,
                "sysbench": runner.sysbench_version()}

    def headline(self) -> tuple[str, str, str]:
        """Transactions per second of the first test at the largest thread count."""
        return (self.opts.tests[0], f"vu{max(self.opts.vus)}", "tps")

    def presentation(self) -> Presentation:
        """A table per sysbench test the run has (tdebench.api.presentation)."""
        return presentation(self.opts.tests).with_headlines(self.headlines())

    def precision_target(self, target: str) -> tuple[str, str, str] | None:
        """TPS, server CPU per transaction, or the latency percentile (sysbench's histogram) of the first test
        at the largest thread count."""
        test, step = self.opts.tests[0], f"vu{max(self.opts.vus)}"
        return precision_series(target, self.headline(), test, step, f"{step}.all")

    def record_slice(self, trial: SlicedSysbenchTrial, test: str, threads: int, round: int, report: Report,
                     seconds: float) -> None:
        """One slice's measurements (with its round) and its line in the slices file."""
        record_report(trial.rec, test, threads, report, round)
        path = (self.rundir.path / "samples" / trial.state.label /
                f"sysbench-block{trial.block:03d}-{test}-vu{threads}-slices.csv")
        append_slice(path, report, round, seconds)

    def planned_trial_seconds(self) -> float:
        """Ramp-up and measured time of every test and thread count."""
        return len(self.opts.tests) * len(self.opts.vus) * (self.opts.rampup + self.opts.duration)

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        rec.workload = self.name
        result = TrialResult()
        with sysbench_account(state.instance, state.dialect.protocol, self.opts.spread == "all") as account:
            for test in self.opts.tests:
                for threads in self.opts.vus:
                    self._step(state, block, rec, result, account, test, threads)
                    if not state.instance.alive():
                        result.failures.append(f"the server of {state.label} died during {test} vu{threads}")
                        return result
        return result

    def _step(self, state: ConfigState, block: int, rec: Recorder, result: TrialResult, account: Any, test: str,
              threads: int) -> None:
        mark = f"{test}.vu{threads}"
        seed = self.opts.seed + block * 1000 + threads if self.opts.seed else 0
        try:
            outcome = runner.run(account, self.opts, test, threads, seed, on_measuring=lambda: state.mark(mark))
        finally:
            state.mark(None)
        write_series(self.rundir.path / "samples" / state.label / f"sysbench-block{block:03d}-{test}-vu{threads}.csv",
                     outcome.report, self.opts.rampup)
        if outcome.code != 0 or not outcome.report.complete:
            result.failures.append(f"{test} vu{threads}: {outcome.error()}")
            return
        record_report(rec, test, threads, outcome.report)
        cpu = server_cpu(state, mark)
        if cpu is not None and outcome.report.transactions:
            rec.add(test, f"vu{threads}", "server_cpu_per_txn", cpu / outcome.report.transactions, "s")
