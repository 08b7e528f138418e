"""The workload plug-in interface: what the orchestrator asks of TPC-H, OLTP, CRUD, ..."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from tdebench.runner.events import RunListener
from tdebench.runner.recorder import Recorder
from tdebench.runner.state import ConfigState, TrialResult


class Workload(ABC):
    """One workload of a run. The orchestrator provisions, verifies, interleaves and records; the workload
    loads its data, runs one trial at a time and judges its own answers."""

    name: ClassVar[str]
    # plaintext strings every loaded database of this workload holds (for the at-rest scan)
    known_plaintext: ClassVar[tuple[str, ...]] = ()
    schema_tables: ClassVar[tuple[str, ...]] = ()

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

    def plan_json(self) -> dict[str, Any]:
        """Workload parameters for the manifest."""
        return {}
