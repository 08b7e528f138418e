"""TPC-H as a workload: data, load, validation answers, power/throughput trials with refresh functions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.api.engine import SqlTranslator
from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.tables import TableSpec
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import RunFiles, SteppedTrial, WaitSplit, Workload
from tdebench.encryption import redact
from tdebench.workloads.loading import shown_load
from tdebench.workloads.rows import count_rows
from tdebench.workloads.tpch.verdicts import AnswerSet, answer_verdicts, load_reference
from tdebench.workloads.tpch import answers, schema
from tdebench.workloads.tpch.datagen import TPCH_RAW_PER_SF, check_data_root, ensure_data
from tdebench.workloads.tpch.loader import load_tpch
from tdebench.workloads.tpch.options import parse_options
from tdebench.workloads.tpch.power import run_stream
from tdebench.workloads.tpch.refresh import apply_rf1, apply_rf2, expected_counts_from_data, refresh_set
from tdebench.workloads.tpch.stepped import PowerSteps
from tdebench.workloads.tpch.translate import TpchTranslator
from tdebench.workloads.tpch.trial import TrialPlan, run_trial
from tdebench.workloads.tpch.presentation import PRESENTATION


class TpchWorkload(Workload):
    """The TPC-H power and throughput tests with RF1/RF2 and the official metrics."""

    name = "tpch"
    shown = PRESENTATION
    database = "tpch"
    known_plaintext = ("Customer#000000001", "Supplier#000000001", "DELIVER IN PERSON", "TAKE BACK RETURN")
    schema_tables = tuple(t.name for t in schema.TABLES)

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.options = parse_options(plan.workload_options)
        self.sf = self.options.sf
        self.data_dir = Path()
        self.answer_sets: dict[str, AnswerSet] = {}

    def tables(self) -> tuple[TableSpec, ...]:
        return schema.TABLES

    def plan_json(self) -> dict[str, Any]:
        o = self.options
        return {"sf": o.sf, "tests": list(o.tests),
                "streams": o.stream_count if "throughput" in o.tests else None,
                "refresh": "every trial (warm-up included) uses its own update sets; sets are never reused, "
                           "and twins in one block get the same sets, so their data stay identical"}

    def sql_translator(self) -> SqlTranslator:
        return TpchTranslator()

    def estimated_input_bytes(self) -> int:
        return int(TPCH_RAW_PER_SF * self.sf)

    def describe(self) -> str:
        queries = f" (queries {','.join(str(n) for n in self.options.queries)})" if self.options.queries else ""
        return f"TPC-H {'+'.join(self.options.tests)}{queries} SF {self.sf:g}"

    def prepare(self, ui: RunListener) -> dict[str, Any]:
        check_data_root(self.sf, self.plan.data_dir)
        ui.task_started("data", f"TPC-H data SF {self.sf:g}", None)
        try:
            self.data_dir, facts = ensure_data(self.sf, self.plan.data_dir, progress=ui.message)
        finally:
            ui.task_finished("data")
        return {**facts, "dir": str(self.data_dir)}

    def _input_bytes(self, table: str) -> int:
        return (self.data_dir / f"{table}.tbl").stat().st_size

    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        with shown_load(state, rec, ui, len(schema.TABLES), self._input_bytes) as on_table:
            load = load_tpch(state.instance, state.dialect, self.data_dir, on_table)
        rec.add("load", "total", "elapsed", load.total_seconds, "s")
        rec.add("load", "constraints", "elapsed", load.constraints_seconds, "s")
        return {"load_seconds": round(load.total_seconds, 6), "load_rows": load.rows}

    def validate(self, state: ConfigState, rec: Recorder, ui: RunListener) -> list[str]:
        """Stream 0 once on the freshly loaded data: these answers are checked against twin and reference."""
        ui.task_started("trial", f"validation {state.label}", len(self.options.queries) or 22)
        try:
            result = run_stream(state.instance, state.dialect, self.sf, 0,
                                on_query=lambda run: ui.task_advanced("trial", 1), queries=self.options.queries)
        finally:
            ui.task_finished("trial")
        for run in result.runs:
            rec.add("validation", f"q{run.number:02d}", "elapsed", run.seconds, "s", 0)
        self.answer_sets[state.label] = {run.number: [answers.normalize_row(r) for r in run.rows]
                                         for run in result.runs}
        if self.plan.keep_answers:
            target = self.rundir.answers_dir(state.label)
            for run in result.runs:
                answers.write_answer_csv(target / f"q{run.number:02d}.csv", run.columns, run.rows)
        return [f"{state.label} validation q{n:02d}: {redact(e)}" for n, e in result.failures.items()]

    def _trial_plan(self, state: ConfigState, block: int) -> TrialPlan:
        sets = [refresh_set(self.sf, u) for u in self.options.update_sets(block)]
        power = "power" in self.options.tests
        return TrialPlan(self.options.tests, self.sf, self.options.stream_count, sets[0] if power else None,
                         sets[1:] if power else sets, self.plan.query_timeout, mark=_marker(state),
                         queries=self.options.queries)

    def headline(self) -> tuple[str, str, str]:
        """The power test's total query time, else the throughput test's Ts."""
        return ("power", "total", "elapsed") if "power" in self.options.tests else ("throughput", "ts", "elapsed")

    def wait_split(self) -> WaitSplit | None:
        """The power test's query time, its server CPU time and the pages its queries read (the engine's counter)."""
        if "power" not in self.options.tests:
            return None
        return WaitSplit(("power", "total", "elapsed"), ("power", "total", "server_cpu"),
                         ("counters", "total", "pages_read"))

    def precision_target(self, target: str) -> tuple[str, str, str] | None:
        """The headline, or with ``cpu`` the server CPU time of the power test's queries (the step probe's), with
        ``power`` the power test's Power@Size (a geometric mean: every query weighs the same)."""
        if target == "cpu":
            split = self.wait_split()
            return split.cpu if split else None
        if target == "power":
            return ("power", "power_at_size", "power_at_size") if "power" in self.options.tests else None
        return super().precision_target(target)

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        result = run_trial(state.instance, state.dialect, self._trial_plan(state, block), rec)
        self._after_trial(state, rec, result)
        return result

    def stepped_trial(self, state: ConfigState, block: int, rec: Recorder, repeat: int) -> SteppedTrial | None:
        """The power test query by query (the throughput test, when selected, runs whole after it)."""
        if "power" not in self.options.tests:
            return None
        return PowerSteps(state, self._trial_plan(state, block), rec,
                          lambda result: self._after_trial(state, rec, result))

    def _after_trial(self, state: ConfigState, rec: Recorder, result: TrialResult) -> None:
        state.applied.extend(result.sets_applied)
        self._check_counts(state, rec, result)

    def _check_counts(self, state: ConfigState, rec: Recorder, result: TrialResult) -> None:
        """orders/lineitem rows after the trial must be what the applied update sets predict."""
        if not state.applied:
            return
        expected = expected_counts_from_data(self.data_dir, state.applied)
        conn = state.instance.connect()
        try:
            actual = count_rows(conn, ("orders", "lineitem"))
        finally:
            conn.close()
        rec.add("refresh", "orders_rows", "rows", actual["orders"], "rows")
        rec.add("refresh", "lineitem_rows", "rows", actual["lineitem"], "rows")
        if (actual["orders"], actual["lineitem"]) != (expected.orders, expected.lineitem):
            result.failures.append(f"row counts after refresh: orders {actual['orders']} (expected {expected.orders}), "
                                   f"lineitem {actual['lineitem']} (expected {expected.lineitem})")

    def replay(self, state: ConfigState, block: int) -> None:
        if self.plan.reset == "snapshot":
            return
        conn = state.instance.connect()
        try:
            for update_set in self.options.update_sets(block):
                rs = refresh_set(self.sf, update_set)
                apply_rf1(conn, state.dialect, rs)
                apply_rf2(conn, state.dialect, rs)
                state.applied.append(rs)
        finally:
            conn.close()

    def recover(self, state: ConfigState, block: int) -> None:
        """Complete the update sets a failed trial left half applied (RF1 without RF2, or neither), so the
        database holds what its twins hold after the same block and the row-count checks stay exact."""
        if self.plan.reset == "snapshot":
            return
        done = {rs.update_set for rs in state.applied}
        conn = state.instance.connect()
        try:
            for update_set in self.options.update_sets(block):
                if update_set in done:
                    continue
                rs = refresh_set(self.sf, update_set)
                if not _order_exists(conn, rs.insert_keys[0]):
                    apply_rf1(conn, state.dialect, rs)
                if _order_exists(conn, rs.delete_keys[0]):
                    apply_rf2(conn, state.dialect, rs)
                state.applied.append(rs)
        finally:
            conn.close()

    def answer_verdicts(self, plain_of: dict[str, str | None]) -> dict[str, dict[str, Any]]:
        reference = load_reference(self.sf)
        if reference is not None and self.options.queries:  # only the queries the run asked for
            reference = {n: rows for n, rows in reference.items() if n in self.options.queries}
        return answer_verdicts(self.answer_sets, plain_of, reference, self.sf)


def _marker(state: ConfigState) -> Callable[[str | None], None]:
    """Steps of a trial as the probe records them: queries and refreshes under "power" (queries also summed into
    its "total"), the throughput test as "throughput"/"ts" beside its Ts."""
    def mark(step: str | None) -> None:
        if step is None:
            state.mark(None)
        elif step == "throughput":
            state.mark("ts", test="throughput")
        else:
            state.mark(step, test="power", total="total" if step.startswith("q") else "")
    return mark


def _order_exists(conn, key: int) -> bool:
    cur = conn.cursor()
    cur.execute(f"SELECT COUNT(*) FROM orders WHERE o_orderkey = {int(key)}")
    found = int(cur.fetchone()[0]) > 0
    conn.commit()
    return found
