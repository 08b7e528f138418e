"""``--workload sql``: a DBA's own schema, data and hot queries (docs/workloads/sql.md).

Headlines (test ``sql``): ``reads``, the weighted total time of the queries; ``writes``, that of the writes; then
every statement by its name; ``total`` (reads + writes) is recorded beside them. ``--precision`` watches all of
them, or those ``--precision-metric`` names.

Under ``--schedule query`` (the default) the statements are interleaved across the twins: on one connection
statement by statement (:mod:`tdebench.workloads.sql.stepped`), with ``--vus N`` as N connections running the
statement mix in slices alternating between the configs (:mod:`tdebench.workloads.sql.mix`). Under ``--schedule
block``, per trial on one connection: every step once in order (queries, then writes, by name, or workload.toml's
``order``), each timed as test ``sql`` with its name as the step. Then, untimed, the writes are undone
(``writes/<name>.undo.sql``, in reverse order) and the row counts of the tables they change are checked against
those after the load; with ``restore = "snapshot"`` the orchestrator restores the loaded data directory before every
trial (``--reset snapshot``) instead.

Validation (right after the load): every query once, its answer kept and compared with the plain twin's (rows as
a multiset, floats within a tolerance); every write and its undo once, the row counts checked. During trials the
query answers of twins are compared block by block (digests keyed by the step's position, ``q01`` = the first).
"""

from __future__ import annotations

import math
import time
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Connection
from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.tables import TableSpec
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.presentation import Headline
from tdebench.api.workload import RunFiles, SteppedTrial, Workload
from tdebench.encryption import redact
from tdebench.errors import RunFailed, UsageError
from tdebench.workloads.sql import answer_check, data
from tdebench.workloads.sql.prove import prove as prove_statements
from tdebench.workloads.sql.csvdata import Converted
from tdebench.workloads.sql.layout import DirProblem, Step, check_family, check_restore, display
from tdebench.workloads.rows import count_rows
from tdebench.workloads.sql.options import parse_options
from tdebench.workloads.sql.stepped import SqlSteps, Visits
from tdebench.workloads.sql.steps import StepRun, record_totals, rollback, run_query, run_write
from tdebench.workloads.tpch.execute import StepTimeout, with_timeout
from tdebench.workloads.tpch.answers import write_answer_csv
from tdebench.workloads.sql.presentation import PRESENTATION

TEST = "sql"


class SqlWorkload(Workload):
    """The user's queries and writes on the user's schema and data."""

    name = "sql"
    shown = PRESENTATION

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.options = self._options(plan.workload_options)
        self.wd = self.options.layout
        self.database = self.wd.database
        self.schema_tables = tuple(self.wd.info.names)
        self.steps: list[Step] = self.wd.steps
        self.restore = self.wd.settings.writes.restore
        writes = [s for s in self.steps if s.kind == "write"]
        try:
            check_restore(self.wd, plan.reset)  # checked when the plan was built; again for a resumed plan
        except DirProblem as exc:
            raise UsageError(str(exc), exc.fix) from None
        self.written = sorted({t for s in writes for t in s.writes_to})
        self.converted: list[Converted] = []
        self.answer_sets: dict[str, answer_check.AnswerSet] = {}
        self.loaded_counts: dict[str, dict[str, int]] = {}
        self.proven: set[str] = set()  # configs whose empty instance planned every statement (schema created)
        self._visits: Visits | None = None  # one connection under --schedule query: runs per visit (stepped.py)
        if plan.repeat > 1 and plan.schedule == "query":
            raise UsageError(f"--repeat does not apply to --workload {self.name}: each statement's runs per block "
                             "come from --duration and --slice", "leave --repeat out; give e.g. --duration 2s "
                             "--slice 250ms for 8 rounds of visits per statement (docs/workloads/sql.md)")

    @classmethod
    def pin_by_default(cls, options: dict[str, Any]) -> str | None:
        """One connection: each statement is a round trip between tdebench and the server, whose time depends on
        whether the two share a CPU; pinned apart, the noise of a visit of a short statement halved (docs/precision.md)."""
        if cls.name != "sql" or options.get("vus"):
            return None
        return "default for --workload sql on one connection (round trips between client and server)"

    @staticmethod
    def _options(raw: dict[str, Any]) -> Any:
        """The checked options (a workload built on this one reads its own)."""
        return parse_options(raw)

    # before any work ---------------------------------------------------------------------------------
    def tables(self) -> tuple[TableSpec, ...]:
        return self.wd.tables

    def check_dialect(self, label: str, dialect: Dialect) -> None:
        try:
            check_family(self.wd, dialect.family)
        except DirProblem as exc:
            raise UsageError(f"{exc} (config {label})", exc.fix) from None

    def prove(self, state: ConfigState) -> None:
        prove_statements(self.wd, state)
        self.proven.add(state.label)

    def estimated_input_bytes(self) -> int | None:
        if self.wd.missing_data:
            return None  # written by the generate command
        return sum(f.path.stat().st_size for f in self.wd.data.values())

    def describe(self) -> str:
        queries = sum(s.kind == "query" for s in self.steps)
        return (f"sql {self.wd.root.name} ({len(self.wd.tables)} tables, {queries} queries, "
                f"{len(self.steps) - queries} writes)")

    def plan_json(self) -> dict[str, Any]:
        return {"dir": str(self.wd.root), "database": self.database, "restore": self.restore,
                "steps": [{"name": s.name, "kind": s.kind, "weight": s.weight} for s in self.steps]}

    # data --------------------------------------------------------------------------------------------
    def prepare(self, ui: RunListener) -> dict[str, Any]:
        ui.task_started("data", f"data of {self.wd.root.name}", None)
        try:
            self.converted = data.prepare_data(self.wd, data.cache_root(self.plan.data_dir))
            self.known_plaintext = data.known_plaintext(self.wd, self.converted)
        finally:
            ui.task_finished("data")
        return {"workload": "sql", **self.plan_json(),
                "tables": {c.table: {"rows": c.rows, "input_bytes": c.input_bytes, "converted": str(c.path)}
                           for c in self.converted},
                "raw_bytes": sum(c.path.stat().st_size for c in self.converted),
                "known_plaintext": list(self.known_plaintext),
                "known_plaintext_source": ("workload.toml" if self.wd.settings.verify.known_plaintext is not None
                                           else "sampled from non-key text columns")}

    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        rec.workload = self.name
        key = f"load-{state.label}"
        ui.task_started(key, f"load {state.label}", len(self.converted))
        schema = self.wd.schema_for(state.dialect.family)
        started = time.perf_counter()
        conn = state.instance.connect()
        try:
            if state.label not in self.proven:  # prove() created it
                state.instance.create_schema(conn, schema.create, self.wd.tables)
            specs = {t.name: t for t in self.wd.tables}
            for item in self.converted:
                t0 = time.perf_counter()
                rows = state.instance.bulk_load(conn, specs[item.table], item.path)
                rec.add("load", item.table, "elapsed", time.perf_counter() - t0, "s")
                rec.add("load", item.table, "rows", rows, "rows")
                rec.add("load", item.table, "input_bytes", item.input_bytes, "bytes")
                if rows != item.rows:
                    raise RunFailed(f"{state.label}: loading {item.table} gave {rows} rows, expected {item.rows}",
                                    "the engine's bulk load dropped rows; see its log")
                ui.task_advanced(key, 1, f"load {state.label}: {item.table}")
            t0 = time.perf_counter()
            state.instance.create_constraints(conn, schema.after_load)
            state.instance.analyze(conn)
            rec.add("load", "constraints", "elapsed", time.perf_counter() - t0, "s")
            self.loaded_counts[state.label] = self._counts(conn)
        finally:
            conn.close()
            ui.task_finished(key)
        seconds = time.perf_counter() - started
        rec.add("load", "total", "elapsed", seconds, "s")
        return {"load_seconds": round(seconds, 6), "load_rows": sum(c.rows for c in self.converted)}

    def _counts(self, conn: Connection) -> dict[str, int]:
        """Rows of every table the writes change."""
        return count_rows(conn, self.written)

    # validation ----------------------------------------------------------------------------------------
    def validate(self, state: ConfigState, rec: Recorder, ui: RunListener) -> list[str]:
        """Every query once (answers kept), every write and its undo once, as the trials run them: under
        ``--schedule block`` the writes in order and their undos at the end, else each write followed by its undo
        (so a write that needs another's rows fails here, and no query sees a write's rows); then the row counts."""
        rec.workload = self.name
        failures: list[str] = []
        answer_set: answer_check.AnswerSet = {}
        alone = self.plan.schedule != "block"
        conn = state.instance.connect()
        try:
            for step in self.steps:
                if step.kind == "write" and self.restore != "undo":
                    continue  # the snapshot is taken after validation: the data must stay as loaded
                problem = self._validate_step(state, conn, step, rec, answer_set, alone)
                if problem:
                    failures.append(f"{state.label} validation {problem}")
            if not alone:
                failures += [f"{state.label} validation: {p}" for p in self._undo(state, conn)]
            elif self.restore == "undo" and not failures:
                failures += [f"{state.label} validation: {p}" for p in self.check_counts(state, conn)]
        finally:
            conn.close()
        self.answer_sets[state.label] = answer_set
        return failures

    def _validate_step(self, state: ConfigState, conn: Connection, step: Step, rec: Recorder,
                       answer_set: answer_check.AnswerSet, alone: bool) -> str | None:
        """One step as a trial runs it (a write run ``alone``: then its undo); what failed, or None."""
        try:
            run = self._run(state, conn, step)
        except Exception as exc:  # noqa: BLE001 - every step is tried, each failure said
            rollback(conn, state.dialect)
            how = " (each write runs on its own, its undo right after)" if alone and step.kind == "write" else ""
            return f"{step.name}{how}: {redact(str(exc))}"
        rec.add("validation", step.name, "elapsed", run.seconds, "s")
        if step.kind == "query":
            answer_set[step.name] = answer_check.normalize(run.rows)
            self._keep_answer(state.label, step.name, run)
        elif alone and step.undo is not None:
            try:
                run_write(conn, state.dialect, self.wd.statements(step.undo, state.dialect.family))
            except Exception as exc:  # noqa: BLE001
                rollback(conn, state.dialect)
                return f"undo of {step.name}: {type(exc).__name__}: {redact(str(exc))}"
        return None

    def _keep_answer(self, label: str, name: str, run: StepRun) -> None:
        """answers/<config>/<query>.csv: a header of column names, then the rows as compared (--keep-answers)."""
        if self.plan.keep_answers:
            write_answer_csv(self.rundir.answers_dir(label) / f"{name}.csv", run.columns, run.rows)

    def answer_verdicts(self, plain_of: dict[str, str | None]) -> dict[str, dict[str, Any]]:
        return answer_check.verdicts(self.answer_sets, plain_of)

    # trials ----------------------------------------------------------------------------------------------
    def _run(self, state: ConfigState, conn: Connection, step: Step, statements: list[str] | None = None) -> StepRun:
        statements = statements or self.wd.statements(step.sql, state.dialect.family)
        if step.kind == "query":
            work = lambda: run_query(conn, statements[0])  # noqa: E731
        else:
            work = lambda: run_write(conn, state.dialect, statements)  # noqa: E731
        return with_timeout(state.instance, conn, self.plan.query_timeout, work)

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        rec.workload = self.name
        result = TrialResult()
        values: dict[str, float] = {}
        failed: set[str] = set()
        conn = state.instance.connect()
        try:
            for position, step in enumerate(self.steps, start=1):
                statements = self.wd.statements(step.sql, state.dialect.family)  # parsed before the step starts
                state.mark(step.name)
                try:
                    run = self._run(state, conn, step, statements)
                except StepTimeout as exc:
                    rollback(conn, state.dialect)
                    rec.add(TEST, step.name, "elapsed", self.plan.query_timeout, "s", status="timeout")
                    result.failures.append(f"{step.name}: {exc}")
                    result.timeouts += 1
                    failed.add(step.name)
                    continue
                except Exception as exc:  # noqa: BLE001 - recorded; the next steps still run
                    rollback(conn, state.dialect)
                    rec.add(TEST, step.name, "elapsed", float("nan"), "s", status="failed")
                    result.failures.append(f"{step.name}: {type(exc).__name__}: {redact(str(exc))}")
                    failed.add(step.name)
                    continue
                finally:
                    state.mark(None)
                rec.add(TEST, step.name, "elapsed", run.seconds, "s")
                values[step.name] = run.seconds
                if step.kind == "query":
                    result.answer_digest[position] = answer_check.digest(answer_check.normalize(run.rows))
            record_totals(rec, TEST, "", self.steps, values, failed)
            result.failures += self._undo(state, conn)
        finally:
            conn.close()
        return result

    def headlines(self) -> tuple[Headline, ...]:
        """``reads`` and ``writes`` (the weighted totals), then every statement; with ``--vus``, at the largest
        number of connections."""
        prefix = f"vu{max(self.options.vus)}." if self.options.vus else ""
        where = f" with {max(self.options.vus)} connections" if self.options.vus else ""

        def steps(kind: str | None = None, name: str | None = None) -> tuple[str, ...] | None:
            """The statements a headline's value comes from; None with --vus (its steps are connection counts)."""
            if self.options.vus:
                return None
            return tuple(s.name for s in self.steps if (kind is None or s.kind == kind) and name in (None, s.name))

        out = [Headline("reads", TEST, f"{prefix}reads", "elapsed",
                        f"reads: weighted total time of the queries{where}", steps=steps("query"))]
        if any(s.kind == "write" for s in self.steps):
            out.append(Headline("writes", TEST, f"{prefix}writes", "elapsed",
                                f"writes: weighted total time of the writes{where}", steps=steps("write")))
        out += [Headline(s.name, TEST, f"{prefix}{s.name}", "elapsed",
                         f"{s.name} ({'query' if s.kind == 'query' else 'write'}): time per execution{where}",
                         steps=steps(name=s.name))
                for s in self.steps]
        return tuple(out)

    def headline(self) -> tuple[str, str, str] | None:
        return self.headlines()[0].series

    def stepped_trial(self, state: ConfigState, block: int, rec: Recorder, repeat: int) -> SteppedTrial | None:
        """The statements interleaved across the twins: one connection visiting each statement in turn, or with
        ``--vus`` connections running the mix in slices."""
        rec.workload = self.name
        if self.options.vus:
            from tdebench.workloads.sql.mix import SqlMix
            return SqlMix(self, state, block, rec)
        return SqlSteps(self, state, rec, self.visits(), self._rounds(), block)

    def _rounds(self) -> int:
        return max(1, math.ceil(self.options.measured_seconds / self.options.slice_seconds - 1e-9))

    def visits(self) -> Visits:
        """How often each statement runs per block, the same on every config (the run's, set by the first visits)."""
        if self._visits is None:
            self._visits = Visits(self.options.slice_seconds, self.options.measured_seconds, self._rounds())
        return self._visits

    def schedule_facts(self) -> dict[str, Any]:
        if self.options.vus:
            from tdebench.workloads.sql.mix import mix_facts
            return mix_facts(self.options)
        return {"visit_s": self.options.slice_seconds, "duration_s": self.options.measured_seconds,
                "rounds_per_step": self._rounds(), "warmup_rounds_per_step": 1, **self.visits().as_json(),
                "pairing_unit": "the block: one time per statement (the mean of its runs) per config and block"}

    def _undo(self, state: ConfigState, conn: Connection) -> list[str]:
        """Undo the writes (reverse order, untimed) and check the row counts; the problems found."""
        if self.restore != "undo":
            return []
        problems = []
        for step in reversed([s for s in self.steps if s.kind == "write"]):
            try:
                run_write(conn, state.dialect, self.wd.statements(step.undo, state.dialect.family))
            except Exception as exc:  # noqa: BLE001
                rollback(conn, state.dialect)
                problems.append(f"undo of {step.name}: {type(exc).__name__}: {redact(str(exc))}")
        return problems or self.check_counts(state, conn)

    def check_counts(self, state: ConfigState, conn: Connection) -> list[str]:
        """The row counts of the tables the writes change, against those after the load: the undo files' check."""
        counts, loaded = self._counts(conn), self.loaded_counts.get(state.label, {})
        return [f"after undoing the writes, {t} holds {counts[t]} rows, not the {loaded[t]} it was loaded with "
                f"(fix the undo files in {display(self.wd.root / 'writes')})"
                for t in counts if t in loaded and counts[t] != loaded[t]]

    def recover(self, state: ConfigState, block: int) -> None:
        """After a failed trial and a restart: undo what its writes may have left."""
        if self.restore != "undo" or not any(s.kind == "write" for s in self.steps):
            return
        conn = state.instance.connect()
        try:
            self._undo(state, conn)
        finally:
            conn.close()
