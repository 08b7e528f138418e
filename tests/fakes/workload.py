"""PROBE: the minimal example workload plus faults on request, for in-process runner tests (tests only).

Options (all ``LABEL@BLOCK[,BLOCK]`` lists separated by ``;``, LABEL a config label):
``fail`` -- the trial raises (a query error); ``crash`` -- the instance (the fake engine's) crashes during the
trial; ``interrupt`` -- Ctrl-C during the trial; ``differ`` (labels only) -- the config's answers differ.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pydantic import field_validator

from tdebench import workloads
from tdebench.api.plan import RunPlan
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import RunFiles
from tests.fakes.examples import load

_minimal = load("minimal_workload")


def _blocks(text: str) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        label, _, blocks = part.partition("@")
        out[label] = {int(b) for b in blocks.split(",") if b.strip()}
    return out


class ProbeOptions(_minimal.MinimalOptions):
    workload_name = "probe"
    fail: str = ""
    crash: str = ""
    interrupt: str = ""
    differ: str = ""

    @field_validator("fail", "crash", "interrupt")
    @classmethod
    def _parse(cls, value: str) -> str:
        try:
            _blocks(value)
        except ValueError:
            raise ValueError("write LABEL@BLOCK[,BLOCK];...") from None
        return value


class ProbeWorkload(_minimal.MinimalWorkload):
    name = "probe"
    database = "probe"

    options_model = ProbeOptions

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.probe: ProbeOptions = self.options
        self.trials_run: list[tuple[str, int]] = []
        self.replayed: list[tuple[str, int]] = []
        self.recovered: list[tuple[str, int]] = []

    def headline(self) -> tuple[str, str, str] | None:
        return ("minimal", "total", "elapsed")  # so that --precision runs on it

    def _wants(self, kind: str, state: ConfigState, block: int) -> bool:
        return block in _blocks(getattr(self.probe, kind)).get(state.label, set())

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        self.trials_run.append((state.label, block))
        if self._wants("interrupt", state, block):
            rec.add("minimal", "aggregate", "elapsed", 0.001, "s")  # a row of the trial in flight
            raise KeyboardInterrupt("probe: Ctrl-C during the trial")
        if self._wants("crash", state, block):
            state.instance.crash()  # the fake engine's "server" dies; the query below fails
        if self._wants("fail", state, block):
            raise RuntimeError(f"probe: injected failure of {state.label} in block {block}")
        result = super().trial(state, block, rec)
        if state.label in self.probe.differ.split(";"):
            result.answer_digest = {1: "a different answer"}
        return result

    def validate(self, state: ConfigState, rec: Recorder, ui: Any) -> list[str]:
        problems = super().validate(state, rec, ui)
        if state.label in self.probe.differ.split(";"):
            self.answers[state.label] = (-1, 0.0, "wrong")
        return problems

    def replay(self, state: ConfigState, block: int) -> None:
        self.replayed.append((state.label, block))

    def recover(self, state: ConfigState, block: int) -> None:
        self.recovered.append((state.label, block))


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """The probe workload in the registry while the block runs (``--workload probe`` in-process)."""
    workloads.register("probe", ProbeWorkload, ProbeOptions)
    try:
        yield
    finally:
        workloads.unregister("probe")
