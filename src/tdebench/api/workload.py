"""The workload plug-in interface: what the orchestrator asks of TPC-H, OLTP, CRUD, a user's own SQL, ..."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Protocol

from tdebench.api.dialect import Dialect
from tdebench.api.engine import SqlTranslator
from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.tables import TableSpec
from tdebench.api.trial import ConfigState, Recorder, TrialResult


class RunFiles(Protocol):
    """The part of the run directory a workload writes to (answers it keeps)."""

    path: Path

    def answers_dir(self, config_label: str) -> Path: ...


class Workload(ABC):
    """One workload of a run. The orchestrator provisions, verifies, interleaves and records; the workload
    loads its data, runs one trial at a time and judges its own answers."""

    name: ClassVar[str]
    #: the database (schema) the engines create for this workload
    database: ClassVar[str] = "tdebench"
    #: plaintext strings every loaded database of this workload holds (for the at-rest scan); a workload
    #: whose data are the user's own sets them per run in :meth:`prepare`
    known_plaintext: tuple[str, ...] = ()
    #: the tables the workload creates (encryption checks and storage sizes look at these)
    schema_tables: tuple[str, ...] = ()

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        self.plan = plan
        self.rundir = rundir

    @abstractmethod
    def prepare(self, ui: RunListener) -> dict[str, Any]:
        """Generate or find the input data once per run; returns facts for the manifest."""

    @abstractmethod
    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        """Create the schema and load the data into a fresh instance; returns facts for the manifest."""

    def validate(self, state: ConfigState, rec: Recorder, ui: RunListener) -> list[str]:
        """Run the workload once untimed-for-stats on the fresh data and keep its answers; returns failures."""
        return []

    @abstractmethod
    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        """One measured (or warm-up) trial."""

    def replay(self, state: ConfigState, block: int) -> None:
        """On resume: bring a reloaded database to the state a completed trial of ``block`` left it in."""

    def recover(self, state: ConfigState, block: int) -> None:
        """After a failed trial and a restart: bring the data to the state the trial would have left."""

    def answer_verdicts(self, plain_of: dict[str, str | None]) -> dict[str, dict[str, Any]]:
        """Per config: are its answers equal to its plain twin's (and a reference)?"""
        return {}

    def check_dialect(self, label: str, dialect: Dialect) -> None:
        """Raise UsageError if the workload, with its options, cannot run on config ``label`` whose engine
        offers ``dialect`` (e.g. stored procedures asked for where there are none); called before any work."""

    def sql_translator(self) -> SqlTranslator | None:
        """The workload's own renderings of its SQL for servers that need it rewritten (external targets);
        None: generic rewriting (sqlglot) is enough."""
        return None

    def tables(self) -> tuple[TableSpec, ...]:
        """The tables the workload creates, known before any work starts (engines check their settings
        against them)."""
        return ()

    def estimated_input_bytes(self) -> int | None:
        """Bytes of input data the run will load, known before :meth:`prepare` (the disk guard's first check);
        None when unknown until the data exist."""
        return None

    def describe(self) -> str:
        """One line naming the workload and its main options, for the run's first console line."""
        options = ", ".join(f"{k} {v}" for k, v in self.plan.workload_options.items())
        return self.name + (f" ({options})" if options else "")

    def plan_json(self) -> dict[str, Any]:
        """Workload parameters for the manifest."""
        return {}
