"""``--workload load``: TPC-H loaded through the client in batches and through the bulk path, per table.

Variants (each a set of steps under test ``ingest``; all by default):

* ``bulk``        -- the engine's bulk path (COPY, LOAD DATA, executemany in one transaction), keys and
  foreign keys added after the load (step ``bulk_constraints``): what the tpch workload does.
* ``bulk_keys``   -- the bulk path into tables whose keys and foreign keys exist before the load.
* ``insert``      -- client ``INSERT`` batches into key-less tables, keys added after.
* ``insert_keys`` -- client ``INSERT`` batches into tables with keys and foreign keys defined.

Per variant and table: elapsed, rows, rows/s, and the table's data and index bytes after the variant; plus
``<variant>_constraints`` (creating keys and indexes, before or after the rows) and ``<variant>_total``.
Row counts are checked against the input files. Each variant starts from dropped tables; the
last one leaves the full TPC-H data in place.
"""

from __future__ import annotations

from typing import Any

from tdebench.api.engine import Connection
from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.tables import TableSpec
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import RunFiles
from tdebench.measure.storage import storage_breakdown, table_sizes
from tdebench.workloads.load.client import insert_batches
from tdebench.workloads.load.options import parse_options
from tdebench.workloads.crud.meter import measured
from tdebench.workloads.crud.workload import record_storage
from tdebench.workloads.tpch import schema
from tdebench.workloads.tpch.loader import load_tpch
from tdebench.workloads.tpch.on_tpch_data import OnTpchData
from tdebench.workloads.load.presentation import PRESENTATION

TEST = "ingest"


class LoadWorkload(OnTpchData):
    """Client-side batched inserts vs the bulk path, with and without keys during the load."""

    name = "load"
    shown = PRESENTATION

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.options = parse_options(plan.workload_options)
        self.expected: dict[str, int] = {}

    def prepare(self, ui: RunListener) -> dict[str, Any]:
        facts = super().prepare(ui)
        self.expected = {name.removesuffix(".tbl"): int(f.get("rows", -1))
                         for name, f in self.data_facts.get("files", {}).items()}
        return facts

    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        """The bulk load verification scans; trials then reload it every way."""
        rec.workload = self.name
        result = load_tpch(state.instance, state.dialect, self.data_dir)
        rec.add("load", "total", "elapsed", result.total_seconds, "s")
        breakdown = storage_breakdown(state.instance, list(self.schema_tables))
        record_storage(rec, breakdown)
        return {"load_seconds": round(result.total_seconds, 6), "storage_tables": breakdown}

    def _load_table(self, state: ConfigState, conn: Connection, variant: str, table: TableSpec) -> int:
        path = self.data_dir / f"{table.name}.tbl"
        if variant.startswith("bulk"):
            return state.instance.bulk_load(conn, table, path)
        return insert_batches(conn, state.dialect, table, path, self.options.batch_rows)

    def _variant(self, state: ConfigState, conn: Connection, variant: str, rec: Recorder, out: TrialResult) -> float:
        """Drop, create, (keys,) load every table, (keys,) analyze; returns the timed seconds."""
        inst, dialect = state.instance, state.dialect
        inst.drop_tables(conn, list(self.schema_tables))
        inst.create_schema(conn, schema.create_table_sql(dialect.family), schema.TABLES)
        keys_first = variant.endswith("_keys")
        total = 0.0
        if keys_first:
            with measured(state, f"{variant}_constraints") as t:
                inst.create_constraints(conn, schema.constraint_and_index_sql(dialect.family))
            rec.add(TEST, t.step, "elapsed", t.seconds, "s")
            total += t.seconds
        for spec in schema.TABLES:
            table = spec.name
            with measured(state, f"{variant}_{table}") as t:
                rows = self._load_table(state, conn, variant, spec)
            rec.add(TEST, t.step, "elapsed", t.seconds, "s")
            rec.add(TEST, t.step, "rows", rows, "rows")
            if self.expected.get(table, rows) != rows:
                out.failures.append(f"{t.step}: {rows} rows loaded, the input has {self.expected[table]}")
            rec.add(TEST, t.step, "rows_per_s", rows / t.seconds if t.seconds > 0 else 0.0, "rows/s")
            if t.server_cpu is not None:
                rec.add(TEST, t.step, "server_cpu", t.server_cpu, "s")
            total += t.seconds
        if not keys_first:
            with measured(state, f"{variant}_constraints") as t:
                inst.create_constraints(conn, schema.constraint_and_index_sql(dialect.family))
            rec.add(TEST, t.step, "elapsed", t.seconds, "s")
            total += t.seconds
        inst.analyze(conn)
        rec.add(TEST, f"{variant}_total", "elapsed", total, "s")
        for table, sizes in table_sizes(inst, list(self.schema_tables), conn).items():
            rec.add(TEST, f"{variant}_{table}", "table_bytes", sizes["table_bytes"], "bytes")
            rec.add(TEST, f"{variant}_{table}", "index_bytes", sizes["index_bytes"], "bytes")
        return total

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        rec.workload = self.name
        conn = state.instance.connect()
        result, total = TrialResult(), 0.0
        try:
            for variant in self.options.variants:
                total += self._variant(state, conn, variant, rec, result)
        finally:
            conn.close()
        rec.add(TEST, "total", "elapsed", total, "s")
        return result

    def replay(self, state: ConfigState, block: int) -> None:
        """Nothing to replay: every variant starts from dropped tables."""

    def validate(self, state: ConfigState, rec: Recorder, ui: RunListener) -> list[str]:
        rec.workload = self.name
        return []
