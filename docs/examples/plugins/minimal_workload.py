"""A minimal workload: one table of items, one timed query, answers compared with the plain twin.

docs/adding-a-workload.md walks through it; the test suite runs the workload conformance kit on it
(tests/unit/test_workload_kit.py), so it keeps working. Register it with
``tdebench.workloads.register("minimal", MinimalWorkload, MinimalOptions)``.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.presentation import Presentation, StepGroup
from tdebench.api.tables import ColumnSpec, TableSpec
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import RunFiles, Workload
from tdebench.workloads.options import WorkloadOptions

ITEMS = TableSpec("items", (ColumnSpec("id", "int"), ColumnSpec("label", "varchar(40)"),
                            ColumnSpec("price", "decimal(10,2)")), primary_key=("id",))
CREATE = "CREATE TABLE items (id INTEGER NOT NULL, label VARCHAR(40) NOT NULL, price DECIMAL(10,2) NOT NULL, " \
         "PRIMARY KEY (id))"
QUERY = "SELECT COUNT(*), SUM(price), MAX(label) FROM items WHERE id % 7 = 3"


class MinimalOptions(WorkloadOptions):
    """``--workload-option rows=N`` (or ``[run.options] rows``); anything else is refused."""

    workload_name = "minimal"
    rows: int = Field(1000, ge=1, le=10_000_000)


SHOWN = Presentation(
    title="One aggregate query", layout="steps",
    step_groups=(StepGroup("minimal", "The aggregate query over every item", ("elapsed",)),))


class MinimalWorkload(Workload):
    """Load ``rows`` items, then time one aggregate query per trial."""

    name = "minimal"
    database = "minimal"
    known_plaintext = ("item label number 000001",)  # in row 1: the at-rest scan looks for it
    options_model: ClassVar[type[MinimalOptions]] = MinimalOptions
    shown = SHOWN  # how the report and the terminal show it

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.options = self.options_model.parse(plan.workload_options)  # UsageError for a bad option
        self.file = Path()
        self.answers: dict[str, tuple[Any, ...]] = {}

    def tables(self) -> tuple[TableSpec, ...]:
        return (ITEMS,)

    def describe(self) -> str:
        return f"minimal ({self.options.rows} items)"

    def prepare(self, ui: RunListener) -> dict[str, Any]:
        """Write the data file once: ``|`` after every field (tdebench.api.tables)."""
        folder = Path(self.plan.data_dir or tempfile.gettempdir()) / "tdebench-minimal"
        folder.mkdir(parents=True, exist_ok=True)
        self.file = folder / f"items-{self.options.rows}.tbl"
        if not self.file.is_file():
            lines = (f"{i}|item label number {i:06d}|{i % 1000}.{i % 100:02d}|\n" for i in range(1, self.options.rows + 1))
            self.file.write_text("".join(lines))
        return {"rows": self.options.rows, "file": str(self.file)}

    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        rec.workload = self.name
        conn = state.instance.connect()
        try:
            state.instance.create_schema(conn, [CREATE], [ITEMS])
            started = time.perf_counter()
            rows = state.instance.bulk_load(conn, ITEMS, self.file)
            rec.add("load", "items", "elapsed", time.perf_counter() - started, "s")
            state.instance.analyze(conn)
        finally:
            conn.close()
        return {"rows": rows}

    def _query(self, state: ConfigState) -> tuple[tuple[Any, ...], float]:
        conn = state.instance.connect()
        try:
            cur = conn.cursor()
            started = time.perf_counter()
            cur.execute(QUERY)
            row = tuple(cur.fetchone())
            conn.commit()
            return row, time.perf_counter() - started
        finally:
            conn.close()

    def validate(self, state: ConfigState, rec: Recorder, ui: RunListener) -> list[str]:
        row, _ = self._query(state)
        self.answers[state.label] = (int(row[0]), round(float(row[1]), 2), str(row[2]))
        return []

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        rec.workload = self.name
        state.mark("aggregate")  # the server resources of this step are attributed to it
        try:
            row, seconds = self._query(state)
        finally:
            state.mark(None)
        rec.add("minimal", "aggregate", "elapsed", seconds, "s")
        rec.add("minimal", "total", "elapsed", seconds, "s")
        return TrialResult(answer_digest={1: repr((int(row[0]), round(float(row[1]), 2), str(row[2])))})

    def answer_verdicts(self, plain_of: dict[str, str | None]) -> dict[str, dict[str, Any]]:
        verdicts = {}
        for label, answer in self.answers.items():
            twin = plain_of.get(label)
            equal = answer == self.answers[twin] if twin and twin != label and twin in self.answers else None
            verdicts[label] = {"compared_with": twin, "answers_equal": equal}
        return verdicts
