"""TPC-C-like OLTP (HammerDB TPROC-C style) as a workload: load, VU sweeps, TPM/NOPM, latency, consistency.

Every trial runs the whole virtual-user sweep; each VU count is one step (``vu5``) measured after its
own ramp-up. Measurements (test ``tpcc``):

* step ``vuN``: ``tpm`` (committed transactions of all five kinds per minute), ``nopm`` (committed
  New-Orders per minute), ``server_cpu_per_txn`` (server CPU seconds of the measured window / committed
  transactions);
* step ``vuN.all``: ``new_order_share`` (NOPM/TPM), ``committed``, ``rolled_back`` (the 1% New-Orders with
  an unused item), ``deadlocks``, ``serialization_failures``, ``lock_timeouts``, ``busy`` (SQLite),
  ``retries``, ``errors``, ``skipped_deliveries``;
* step ``vuN.<kind>`` for kind in new_order, payment, order_status, delivery, stock_level:
  ``latency_p50``, ``latency_p95``, ``latency_p99``, ``latency_mean``, ``latency_max`` (s) and ``count``;
* step ``consistency``: ``condition_N_violations`` for every TPC-C consistency condition checked (1-10 and 12;
  a violation fails the trial) and ``elapsed`` (seconds the check took); on a cluster also ``nodes_checked`` and
  ``nodes_differing`` (nodes whose row counts and column sums differ from node 1's; one fails the trial).

The per-second throughput of each step goes to ``samples/<config>/tpcc-block<NNN>-vu<N>.csv``.

With the interleaved schedule (``--schedule query``, the default with a warm cache) every value above except the
consistency rows is recorded once per slice with its ``round`` (:mod:`tdebench.workloads.tpcc.slices`), plus
``vuN.all/server_cpu_while_paused`` (server CPU seconds while the other configs ran their slices) and step
``vuN.per_txn`` with the engine's counters per committed transaction (``log_bytes``, ``pages_written``,
``bytes_written``, ``bytes_encrypted``, ``bytes_decrypted``, ``cache_misses``); the per-second
series of every slice go to ``samples/<config>/tpcc-block<NNN>-vu<N>-slices.csv`` (with a ``round`` column).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Instance
from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.tables import TableSpec
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import Need, RunFiles
from tdebench.encryption import redact
from tdebench.errors import UsageError
from tdebench.workloads.loading import shown_load
from tdebench.workloads.slicing import SlicedWorkload, precision_series
from tdebench.workloads.tpcc import schema
from tdebench.workloads.tpcc.consistency import check_instance
from tdebench.workloads.tpcc.datagen import ensure_data
from tdebench.workloads.tpcc.driver import StepResult, run_step
from tdebench.workloads.tpcc.loader import load_tpcc
from tdebench.workloads.tpcc.nodes import differences, node_digests
from tdebench.workloads.tpcc.options import parse_options
from tdebench.workloads.tpcc.procs import has_procedures, resolve_mode
from tdebench.workloads.tpcc.session import RETRY_KINDS, knows_deleted_rows
from tdebench.workloads.tpcc.slices import SlicedTpccTrial
from tdebench.workloads.tpcc.smoke import data_digest, smoke_test
from tdebench.workloads.tpcc.presentation import PRESENTATION

TEST = "tpcc"
PERCENTILES = (50, 95, 99)



def server_cpu(state: ConfigState, step: str) -> float | None:
    """Server CPU seconds of the DBMS process tree during ``step`` so far (None when not sampling)."""
    sampler = state.sampler
    if sampler is None:
        return None
    try:
        res = sampler.snapshot().per_step().get(step)
    except Exception:  # noqa: BLE001 - resources never cost a measured trial
        return None
    return res.server_cpu_s if res is not None else None


def record_step(rec: Recorder, step: StepResult, round: int | None = None) -> None:
    """The measurements of one VU step, or of one slice of it in ``round`` (names in the module docstring)."""
    name = f"vu{step.vus}"

    def add(sub: str, metric: str, value: float, unit: str) -> None:
        rec.add(TEST, sub, metric, value, unit, round=round)

    add(name, "tpm", step.tpm, "tpm")
    add(name, "nopm", step.nopm, "nopm")
    counts = f"{name}.all"
    if step.committed:
        add(counts, "new_order_share", step.nopm / step.tpm, "ratio")
    add(counts, "committed", step.committed, "txn")
    add(counts, "rolled_back", step.rolled_back, "txn")
    for kind in RETRY_KINDS:
        add(counts, kind, step.retries.get(kind, 0), "count")
    add(counts, "retries", sum(step.retries.values()), "count")
    add(counts, "errors", step.errors + step.gave_up, "count")
    add(counts, "skipped_deliveries", step.skipped_districts, "count")
    for kind, hist in step.latency.items():
        sub = f"{name}.{kind}"
        add(sub, "count", hist.count, "txn")
        if not hist.count:
            continue
        for pct in PERCENTILES:
            add(sub, f"latency_p{pct}", hist.percentile(pct) or 0.0, "s")
        add(sub, "latency_mean", hist.mean or 0.0, "s")
        add(sub, "latency_max", hist.max_ns / 1e9, "s")


def check_consistency(instance: Instance, rec: Recorder) -> list[str]:
    """The consistency conditions after a trial: violations per condition and the seconds the check took as
    measurements; returns a failure per violated condition."""
    started = time.perf_counter()
    found = check_instance(instance)
    rec.add(TEST, "consistency", "elapsed", time.perf_counter() - started, "s")
    failures = []
    for condition, violations in found.items():
        rec.add(TEST, "consistency", f"{condition}_violations", violations.count, "count")
        if violations:
            failures.append(f"TPC-C consistency {condition.replace('_', ' ')} violated: {violations.summary()}")
    if instance.client_nodes() > 1:  # a cluster: every node holds node 1's data
        differ = differences(node_digests(instance))
        rec.add(TEST, "consistency", "nodes_checked", instance.client_nodes(), "count")
        rec.add(TEST, "consistency", "nodes_differing", len(differ), "count")
        failures += [f"TPC-C data of the cluster's nodes: {d}" for d in differ]
    return failures


class TpccWorkload(SlicedWorkload):
    """HammerDB-TPROC-C-like OLTP with virtual-user sweeps; the interleaved schedule keeps persistent virtual users
    and alternates their slices between configs (:mod:`tdebench.workloads.tpcc.slices`)."""

    name = "tpcc"
    shown = PRESENTATION
    needs = (Need("its virtual users are processes of their own, and the engine's database can be opened by one "
                  "process only", lambda e: e.dialect.multi_process),
             Need("Delivery cannot tell whether it deleted the new order it selected: the driver's rowcount counts "
                  "nothing and no lock holds the selected row", lambda e: knows_deleted_rows(e.dialect)))
    database = "tpcc"
    # 10% of I_DATA and S_DATA hold "ORIGINAL" (non-key columns: encrypted by every mechanism we test)
    known_plaintext = ("ORIGINAL",)
    schema_tables = schema.TABLE_NAMES
    sliced_trial = SlicedTpccTrial

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.opts = parse_options(plan.workload_options, precision=plan.precision is not None)
        self.data_dir = Path()
        self.digests: dict[str, dict[str, Any]] = {}

    def _mode(self, dialect: Dialect) -> str:
        return resolve_mode(self.opts.mode, dialect)

    def tables(self) -> tuple[TableSpec, ...]:
        return schema.TABLE_SPECS

    def check_dialect(self, label: str, dialect: Dialect) -> None:
        """``mode = procedures`` needs an engine that has them."""
        if self.opts.mode == "procedures" and not has_procedures(dialect):
            raise UsageError(f"tpcc option mode = procedures: config '{label}' ({dialect.product}) has no stored "
                             "procedures tdebench can install",
                             "use mode = statements or auto (statements on SQLite, procedures elsewhere)")

    def plan_json(self) -> dict[str, Any]:
        return {"workload": self.name, **self.opts.model_dump()}

    def prepare(self, ui: RunListener) -> dict[str, Any]:
        ui.task_started("data", f"TPC-C data, {self.opts.warehouses} warehouse(s)", None)
        try:
            self.data_dir, facts = ensure_data(self.opts.warehouses, self.opts.seed, self.plan.data_dir,
                                               self.opts.load_workers, progress=ui.message)
        finally:
            ui.task_finished("data")
        return {**facts, "dir": str(self.data_dir), "raw_bytes": facts.get("bytes", 0), "options": self.plan_json()}

    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        rec.workload = self.name
        with shown_load(state, rec, ui, len(schema.TABLES)) as on_table:
            load = load_tpcc(state.instance, state.dialect, self.data_dir, self.opts.warehouses, on_table,
                             procedures=self._mode(state.dialect) == "procedures")
        rec.add("load", "total", "elapsed", load.total_seconds, "s")
        rec.add("load", "indexes", "elapsed", load.index_seconds, "s")
        facts: dict[str, Any] = {"load_seconds": round(load.total_seconds, 6), "load_rows": load.rows,
                                 "warehouses": self.opts.warehouses, "tpcc_mode": self._mode(state.dialect)}
        if not state.dialect.row_locks:
            facts["tpcc_note"] = (f"{state.dialect.product} has a single writer: write transactions start with "
                                  f"{state.dialect.begin_sql} and wait on the busy timeout, so TPM does not scale "
                                  "with virtual users")
        return facts

    def validate(self, state: ConfigState, rec: Recorder, ui: RunListener) -> list[str]:
        """Each transaction once (fixed inputs, identical for twins), consistency, then a digest of the data."""
        rec.workload = self.name
        failures = [f"{state.label} validation: {redact(e)}" for e in smoke_test(state.instance, state.dialect,
                                                                                  self.opts)]
        found = check_instance(state.instance)
        rec.add("validation", "consistency", "violations", sum(v.count for v in found.values()), "count")
        failures += [f"{state.label} consistency after load: {c.replace('_', ' ')} violated: {v.summary()}"
                     for c, v in found.items() if v]
        conn = state.instance.connect()
        try:
            self.digests[state.label] = data_digest(conn)
        finally:
            conn.close()
        return failures

    def planned_trial_seconds(self) -> float:
        """Ramp-up and measured time of every virtual-user step (the consistency check comes after)."""
        return len(self.opts.vus) * (self.opts.rampup + self.opts.duration)

    def headline(self) -> tuple[str, str, str]:
        """TPM at the largest virtual-user count."""
        return (TEST, f"vu{max(self.opts.vus)}", "tpm")

    def precision_target(self, target: str) -> tuple[str, str, str] | None:
        """TPM, server CPU per transaction, or New-Order's latency percentile (TPC-C's response-time
        transaction), at the largest virtual-user count."""
        step = f"vu{max(self.opts.vus)}"
        return precision_series(target, self.headline(), TEST, step, f"{step}.new_order")

    def record_slice(self, trial: SlicedTpccTrial, step: str, round: int, result: StepResult) -> None:
        """One slice's measurements (with its round), its per-second series and failures."""
        record_step(trial.rec, result, round)
        path = self.rundir.path / "samples" / trial.state.label / f"tpcc-block{trial.block:03d}-{step}-slices.csv"
        result.append_series(path, round)
        trial.result.failures += [f"{step} round {round}: {f}" for f in result.failures]

    def finish_sliced(self, trial: SlicedTpccTrial) -> None:
        """After the block's slices: the consistency conditions."""
        if not trial.result.failures:
            self._check_consistency(trial.state, trial.rec, trial.result)

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        rec.workload = self.name
        result = TrialResult()
        for vus in self.opts.vus:
            step = run_step(state.instance, state.dialect, self.opts, vus, self.opts.seed + 7919 * block + vus,
                            mark=state.mark)
            record_step(rec, step)
            cpu = server_cpu(state, f"vu{vus}")
            if cpu is not None and step.committed:
                rec.add(TEST, f"vu{vus}", "server_cpu_per_txn", cpu / step.committed, "s")
            path = self.rundir.path / "samples" / state.label / f"tpcc-block{block:03d}-vu{vus}.csv"
            step.write_series(path, self.opts.rampup)
            result.failures += [f"vu{vus}: {f}" for f in step.failures]
            if not state.instance.alive():
                result.failures.append(f"the server of {state.label} died during step vu{vus}")
                return result
        self._check_consistency(state, rec, result)
        return result

    def _check_consistency(self, state: ConfigState, rec: Recorder, result: TrialResult) -> None:
        result.failures += check_consistency(state.instance, rec)

    def answer_verdicts(self, plain_of: dict[str, str | None]) -> dict[str, dict[str, Any]]:
        """Per config: the loaded (and validated) data equal the plain twin's (row counts and sums)."""
        verdicts: dict[str, dict[str, Any]] = {}
        for label, digest in self.digests.items():
            verdict: dict[str, Any] = {"checked": "row counts and column sums after load and one of each transaction"}
            twin = plain_of.get(label)
            if twin and twin != label and twin in self.digests:
                theirs = self.digests[twin]
                problems = [f"{k}: {digest.get(k)} vs {theirs.get(k)} in {twin}" for k in sorted(theirs)
                            if digest.get(k) != theirs.get(k)]
                verdict.update(compared_with=twin, equal_to_plain=not problems, plain_mismatches=problems[:10])
            verdict["answers_equal"] = verdict.get("equal_to_plain")
            verdicts[label] = verdict
        return verdicts
