"""What workloads measuring something else on TPC-H's data (load, backup) share: the data, its tables, and their
facts for the manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.tables import TableSpec
from tdebench.api.workload import RunFiles, Workload
from tdebench.workloads.tpch import schema
from tdebench.workloads.tpch.datagen import TPCH_RAW_PER_SF, check_data_root, ensure_data
from tdebench.workloads.tpch.workload import TpchWorkload


class ScaledOptions(Protocol):
    """A workload's options with TPC-H's scale factor."""

    sf: float

    def model_dump(self) -> dict[str, Any]: ...


class OnTpchData(Workload):
    """A workload on TPC-H's tables and data at ``options.sf``; subclasses set ``options`` in ``__init__``."""

    database = "tpch"
    known_plaintext = TpchWorkload.known_plaintext
    schema_tables = tuple(t.name for t in schema.TABLES)
    options: ScaledOptions

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.data_dir = Path()
        #: the generated data's facts (files, rows), as :func:`ensure_data` gave them
        self.data_facts: dict[str, Any] = {}

    def plan_json(self) -> dict[str, Any]:
        return self.options.model_dump()

    def tables(self) -> tuple[TableSpec, ...]:
        return schema.TABLES

    def estimated_input_bytes(self) -> int:
        return int(TPCH_RAW_PER_SF * self.options.sf)

    def prepare(self, ui: RunListener) -> dict[str, Any]:
        """Generate (or find) the data at the options' scale factor."""
        check_data_root(self.options.sf, self.plan.data_dir)
        ui.task_started("data", f"TPC-H data SF {self.options.sf:g}", None)
        try:
            self.data_dir, self.data_facts = ensure_data(self.options.sf, self.plan.data_dir, progress=ui.message)
        finally:
            ui.task_finished("data")
        return {**self.data_facts, "dir": str(self.data_dir), "workload": self.name, **self.plan_json()}
