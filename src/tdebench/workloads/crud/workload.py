"""The CRUD workload: SELECT / INSERT / DELETE batches of k rows on a wide Persons table.

Per trial and batch size k (in the order given): SELECT ids 1…k fetching every row, INSERT k rows from
``persons_stage`` (server side, ``INSERT … SELECT``), DELETE ids 1…k; then the table is put back (inserted
ids removed, deleted ids restored from ``persons_undo``, statistics refreshed) untimed, so every batch and
every trial starts from the same rows. The same reset runs at the start of every trial, so a failed trial
leaves nothing behind either. ``--reset snapshot`` still works (the orchestrator then also restores the
data directory before each trial; the workload's own reset is then a no-op check).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tdebench.api.dialect import Dialect
from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.tables import TableSpec
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import RunFiles, Workload
from tdebench.errors import RunFailed
from tdebench.measure.storage import storage_breakdown
from tdebench.workloads.crud import data, schema
from tdebench.workloads.crud.ops import TEST, record, run_op
from tdebench.workloads.rows import query_one
from tdebench.workloads.crud.options import parse_options
from tdebench.workloads.crud.presentation import PRESENTATION

if TYPE_CHECKING:
    from tdebench.api.engine import Connection


def cache_root(plan: RunPlan) -> Path:
    """``<--data-dir>/crud`` or ``$XDG_CACHE_HOME/tdebench/crud``."""
    from tdebench.workloads.tpch.datagen import default_cache_root

    return (plan.data_dir / "crud") if plan.data_dir else default_cache_root().parent / "crud"


def record_storage(rec: Recorder, breakdown: dict[str, Any]) -> None:
    """Per-table sizes of a :func:`storage_breakdown` as ``storage`` measurements."""
    for table, sizes in breakdown.get("tables", {}).items():
        for key in ("table_bytes", "index_bytes", "total_bytes"):
            rec.add("storage", table, key, sizes[key], "bytes")
    if breakdown.get("data_dir_bytes") is not None:  # None: a server whose files tdebench cannot see (external)
        rec.add("storage", "data_dir", "bytes", breakdown["data_dir_bytes"], "bytes")


class CrudWorkload(Workload):
    """SELECT/INSERT/DELETE batches with elapsed time, server CPU, MB/s and table sizes."""

    name = "crud"
    shown = PRESENTATION
    database = "crud"
    known_plaintext = (data.KNOWN_CITY, data.KNOWN_STREET)

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.options = parse_options(plan.workload_options)
        self.files = Path()
        self.digests: dict[str, tuple[int, ...]] = {}

    def plan_json(self) -> dict[str, Any]:
        return self.options.model_dump()

    def tables(self) -> tuple[TableSpec, ...]:
        return schema.TABLE_SPECS

    def prepare(self, ui: RunListener) -> dict[str, Any]:
        o = self.options
        ui.task_started("data", f"Persons data: {o.rows:,} rows + {o.max_batch:,} staged", None)
        try:
            self.files, counts = data.ensure_files(cache_root(self.plan), o.rows, o.max_batch, o.seed)
        finally:
            ui.task_finished("data")
        sizes = [(self.files / "persons.tbl").stat().st_size, (self.files / f"persons_stage-{o.max_batch}.tbl").stat().st_size]
        return {"workload": "crud", "dir": str(self.files), "rows": counts, "raw_bytes": sizes[0] + 2 * sizes[1],
                **self.plan_json()}

    # load --------------------------------------------------------------------------------------------
    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        rec.workload = self.name  # also right with orchestrators whose recorders default to "tpch"
        o = self.options
        ui.task_started(f"load-{state.label}", f"load {state.label}", 4)
        t_all = time.perf_counter()
        conn = state.instance.connect()
        try:
            state.instance.create_schema(conn, schema.create_all_sql(state.dialect), schema.TABLE_SPECS)
            for table, path in (("persons", self.files / "persons.tbl"),
                                ("persons_stage", self.files / f"persons_stage-{o.max_batch}.tbl")):
                t0 = time.perf_counter()
                rows = state.instance.bulk_load(conn, schema.table_spec(table), path)
                rec.add("load", table, "elapsed", time.perf_counter() - t0, "s")
                rec.add("load", table, "rows", rows, "rows")
                rec.add("load", table, "input_bytes", path.stat().st_size, "bytes")
                ui.task_advanced(f"load-{state.label}", 1)
            t0 = time.perf_counter()
            conn.cursor().execute(schema.copy_undo_sql(o.max_batch))
            conn.commit()
            state.instance.analyze(conn)
            rec.add("load", "undo_and_analyze", "elapsed", time.perf_counter() - t0, "s")
        finally:
            conn.close()
            ui.task_finished(f"load-{state.label}")
        rec.add("load", "total", "elapsed", time.perf_counter() - t_all, "s")
        breakdown = storage_breakdown(state.instance, list(schema.TABLES))
        record_storage(rec, breakdown)
        return {"load_seconds": round(time.perf_counter() - t_all, 6), "storage_tables": breakdown}

    # checks ------------------------------------------------------------------------------------------
    def _digest(self, conn: "Connection", dialect: Dialect) -> tuple[int, ...]:
        return tuple(int(v) for v in query_one(conn, schema.measure_sql(dialect, "persons", 1, self.options.rows)))

    def validate(self, state: ConfigState, rec: Recorder, ui: RunListener) -> list[str]:
        """Row count and a checksum of the loaded table, compared with the plain twin later."""
        rec.workload = self.name
        conn = state.instance.connect()
        try:
            self.digests[state.label] = digest = self._digest(conn, state.dialect)
            staged = query_one(conn, schema.count_sql("persons_stage"))
        finally:
            conn.close()
        problems = []
        if digest[0] != self.options.rows:
            problems.append(f"{state.label}: persons holds {digest[0]} rows, expected {self.options.rows}")
        if int(staged[0]) != self.options.max_batch:
            problems.append(f"{state.label}: persons_stage holds {staged[0]} rows, expected {self.options.max_batch}")
        return problems

    def answer_verdicts(self, plain_of: dict[str, str | None]) -> dict[str, dict[str, Any]]:
        out = {}
        for label, digest in self.digests.items():
            verdict: dict[str, Any] = {"rows": digest[0], "value_bytes": digest[1]}
            twin = plain_of.get(label)
            if twin and twin != label and twin in self.digests:
                verdict.update(compared_with=twin, equal_to_plain=digest == self.digests[twin])
            verdict["answers_equal"] = verdict.get("equal_to_plain", digest[0] == self.options.rows)
            out[label] = verdict
        return out

    # trials ------------------------------------------------------------------------------------------
    def _reset(self, state: ConfigState, conn: "Connection") -> None:
        """Put persons back to ids 1…rows (untimed, unattributed) and refresh statistics."""
        o = self.options
        state.mark(None)
        for sql in schema.reset_sql(o.rows, o.max_batch):
            conn.cursor().execute(sql)
        conn.commit()
        state.instance.analyze(conn)
        count, first, last = (int(v) for v in query_one(conn, schema.count_sql("persons")))
        if (count, first, last) != (o.rows, 1, o.rows):
            raise RunFailed(f"{state.label}: persons holds {count} rows (ids {first}…{last}) after the reset, "
                            f"expected {o.rows} (ids 1…{o.rows})", "the previous trial left the table inconsistent")

    def headline(self) -> tuple[str, str, str]:
        """The total time of the trial's operations."""
        return (TEST, "total", "elapsed")

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        rec.workload = self.name
        o = self.options
        result = TrialResult()
        total = 0.0
        conn = state.instance.connect()
        try:
            self._reset(state, conn)
            for k in o.batches:
                for op in o.operations:
                    res = run_op(state, conn, op, k, o.rows, o.fetch_size)
                    record(rec, res)
                    total += res.seconds
                    if res.rows != res.expected_rows or res.rows != k:
                        result.failures.append(f"{res.step}: processed {res.rows} rows, expected {k}")
                self._reset(state, conn)
        finally:
            conn.close()
        rec.add(TEST, "total", "elapsed", total, "s")
        return result

    def replay(self, state: ConfigState, block: int) -> None:
        """Nothing to replay: every trial starts with the reset to the loaded rows."""
