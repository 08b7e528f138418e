"""The workload plug-in interface: what the orchestrator asks of TPC-H, OLTP, CRUD, a user's own SQL, ..."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Engine, SqlTranslator
from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.presentation import COMMON_WAIT, Headline, Presentation
from tdebench.api.tables import TableSpec
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.errors import UsageError


class RunFiles(Protocol):
    """The part of the run directory a workload writes to (answers it keeps)."""

    path: Path

    def answers_dir(self, config_label: str) -> Path: ...


class SteppedTrial(ABC):
    """One config's trial cut into steps, so that ``--schedule query`` can interleave twins step by step.

    The orchestrator (:mod:`tdebench.runner.schedule`) makes one per config for a block, then calls, with every
    config's server up: :meth:`begin` for each config in the block's order (work whose unit stays the block,
    e.g. TPC-H's RF1); for each step of :attr:`steps` in turn, ``repeat`` rounds, each running :meth:`run_step`
    once on every config in a fresh random order; then :meth:`finish` for each config in the block's order (RF2,
    official metrics, the throughput test), which records one value per step and trial and returns the trial's
    result. The pairing unit is still the block: one value per step (the mean of its runs) and one total per
    config and block. A step that raises ends that config's trial (it is recorded as failed and its instance
    restarted as after a failed block-schedule trial); :meth:`abort` then releases what the trial holds.
    """

    #: the interleavable steps in the order they run, identical for every config of the block
    steps: tuple[str, ...] = ()
    #: rounds per step, when the trial decides them (TPC-C's slices: ceil(duration / slice)); None: ``--repeat``.
    #: A trial that sets it records each round's values with their ``round`` (the pairing unit), not their mean
    rounds: int | None = None
    #: rounds of a warm-up block, when fewer than :attr:`rounds` are enough to warm it; None: as many
    warmup_rounds: int | None = None

    #: steps left out of this block by :meth:`skip`
    skipped: frozenset[str] = frozenset()

    def skip(self, steps: frozenset[str]) -> None:
        """Leave ``steps`` out of this block, before :meth:`begin`: every figure the precision rule watches that
        needs them has met its target. Only steps named by a headline's ``steps`` are ever skipped; a trial whose
        headlines name steps records no value, and no headline, that needs a skipped one."""
        self.skipped = frozenset(steps) & frozenset(self.steps)
        self.steps = tuple(s for s in self.steps if s not in self.skipped)

    def begin(self) -> None:
        """Before the steps (e.g. open the session, RF1); called in the block's config order."""

    def ready(self, step: str) -> None:
        """Start what the first run of ``step`` needs (TPC-C's virtual users, a sysbench process, with their
        ramp-up), so that its first :meth:`run_step` measures at once. ``--schedule duet`` calls it for each twin
        before a step's first pair; otherwise the first :meth:`run_step` does it. Default: nothing to start."""

    @abstractmethod
    def run_step(self, step: str, repetition: int) -> None:
        """Run ``step`` once (``repetition`` 0, 1, …); failures of the step itself are kept for :meth:`finish`."""

    @abstractmethod
    def finish(self) -> TrialResult:
        """Record the per-step values and everything after the steps; the trial's result."""

    def abort(self) -> None:
        """Release connections after a step raised (the trial is then recorded as failed)."""


@dataclass(frozen=True)
class Need:
    """A capability a workload needs of every engine it runs on, whatever its options: ``met`` tests the
    :class:`Engine` (its declared capabilities, its :class:`Dialect`), ``reason`` says what is missing. The one place that declares which engine x workload pairs
    cannot run (the CLI refuses them before any work; tests/engines/test_matrix.py runs every other pair)."""

    reason: str
    met: Callable[[Engine], bool]


@dataclass(frozen=True)
class WaitSplit:
    """The series a workload's main time splits into with pages read from the disk: its elapsed time, its server's
    CPU time over the same statements and the pages they read from the disk (each (test, step, metric)); the time
    at the block's common wait per read is recorded beside the elapsed time, as :attr:`derived`
    (:mod:`tdebench.stats.common_wait`)."""

    elapsed: tuple[str, str, str]
    cpu: tuple[str, str, str]
    reads: tuple[str, str, str]

    @property
    def derived(self) -> tuple[str, str, str]:
        return (self.elapsed[0], self.elapsed[1], COMMON_WAIT)


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
    #: with ``--schedule query`` its values are paired per round (:attr:`SteppedTrial.rounds`), several rounds a
    #: block (each block still counts once: docs/precision-statistics.md, "The block effect")
    pairs_by_round: ClassVar[bool] = False
    #: False for a workload whose configs hold plaintext on purpose after the load and reach their spec only in
    #: its trials (``encrypt``): the orchestrator then does not verify them after the load (the workload scans)
    verify_after_load: ClassVar[bool] = True
    #: what every engine must offer for this workload to run on it (:class:`Need`); an engine lacking one is refused
    needs: ClassVar[tuple[Need, ...]] = ()
    #: how the workload is shown (:class:`~tdebench.api.presentation.Presentation`) without a run's own headlines,
    #: which :meth:`presentation` adds; also what ``tdebench report`` falls back on for a run directory written
    #: before the manifest carried it. None: its steps, test by test, under its name
    shown: ClassVar[Presentation | None] = None

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        self.plan = plan
        self.rundir = rundir

    @abstractmethod
    def prepare(self, ui: RunListener) -> dict[str, Any]:
        """Generate or find the input data once per run; returns facts for the manifest."""

    def prove(self, state: ConfigState) -> None:
        """Called for every config, its instance started and empty, before any instance is loaded: show that the
        workload's statements run there (e.g. the server plans each one); UsageError naming what and the fix."""

    @abstractmethod
    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        """Create the schema and load the data into a fresh instance; returns facts for the manifest."""

    def validate(self, state: ConfigState, rec: Recorder, ui: RunListener) -> list[str]:
        """Run the workload once untimed-for-stats on the fresh data and keep its answers; returns failures."""
        return []

    @abstractmethod
    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        """One measured (or warm-up) trial."""

    def stepped_trial(self, state: ConfigState, block: int, rec: Recorder, repeat: int) -> SteppedTrial | None:
        """The trial of ``block`` as interleavable steps for ``--schedule query``, each step run ``repeat`` times;
        None (the default): this workload (with these options) runs whole trials, and the block schedule is used."""
        return None

    def schedule_facts(self) -> dict[str, Any]:
        """What the interleaved schedule does with this workload, for the manifest's ``schedule`` (e.g. slice length
        and rounds); empty when it interleaves steps as TPC-H does."""
        return {}

    def precision_target(self, target: str) -> tuple[str, str, str] | None:
        """(test, step, metric) that ``--precision-metric TARGET`` watches: ``headline`` (:meth:`headline`),
        ``cpu`` (the server CPU time beside the headline, e.g. TPC-C's per transaction) or ``p50``/``p95``/``p99``
        (the headline latency percentile, e.g. TPC-C New-Order's), ``common-wait`` (the time at a common wait per page
        read, :meth:`wait_split`); None: the workload records no such series."""
        if target == "common-wait":
            split = self.wait_split()
            return split.derived if split else None
        return self.headline() if target == "headline" else None

    def wait_split(self) -> WaitSplit | None:
        """The series its main time splits into when pages are read from the disk (:class:`WaitSplit`); None: the
        workload has no such time (the default)."""
        return None

    def headline(self) -> tuple[str, str, str] | None:
        """(test, step, metric) of the workload's headline figure, the one ``--precision`` watches (e.g. TPC-H's
        power total elapsed time); None: the workload has none, and ``--precision`` is refused."""
        return None

    def headlines(self) -> tuple[Headline, ...]:
        """The figures the workload reports first, the first of them its main one; default: :meth:`headline` alone
        (named ``headline``). A workload with several (a user's reads and writes) declares each."""
        series = self.headline()
        if series is None:
            return ()
        return (Headline("headline", *series, title=f"{series[0]} {series[1]} {series[2]}"),)

    def presentation(self) -> Presentation:
        """How this run of the workload is shown: :attr:`shown` with the run's :meth:`headlines` (the manifest's
        ``plan.presentation``)."""
        base = self.shown or Presentation(self.name)
        declared = {h.series: h for h in base.headlines}  # the declaration's titles where the series agree
        return base.with_headlines(tuple(declared.get(h.series, h) for h in self.headlines()) or base.headlines)

    @classmethod
    def pin_by_default(cls, options: dict[str, Any]) -> str | None:
        """Why a run of this workload with these (raw) options pins tdebench and the servers to CPUs of their own
        when neither ``--pin`` nor ``--no-pin`` is given; None (the default): it does not."""
        return None

    def planned_trial_seconds(self) -> float | None:
        """How long one trial is planned to run (``--fault kill-node@50%`` kills that share into it); None:
        unknown (the fault's time must then be given in seconds)."""
        return None

    def replay(self, state: ConfigState, block: int) -> None:
        """On resume: bring a reloaded database to the state a completed trial of ``block`` left it in."""

    def recover(self, state: ConfigState, block: int) -> None:
        """After a failed trial and a restart: bring the data to the state the trial would have left."""

    def answer_verdicts(self, plain_of: dict[str, str | None]) -> dict[str, dict[str, Any]]:
        """Per config: are its answers equal to its plain twin's (and a reference)?"""
        return {}

    @classmethod
    def unmet_need(cls, engine: Engine) -> str | None:
        """The reason of the first of :attr:`needs` ``engine`` lacks; None when it has them all."""
        return next((need.reason for need in cls.needs if not need.met(engine)), None)

    def check_engine(self, label: str, engine: Engine) -> None:
        """Before any work: UsageError if config ``label``'s engine lacks one of :attr:`needs`, then
        :meth:`check_dialect` (what the options ask of it)."""
        reason = self.unmet_need(engine)
        if reason is not None:
            raise UsageError(f"--workload {self.name} does not run on '{label}' ({engine.dialect.product}): {reason}",
                             f"use an engine that has it (docs/workloads/{self.name}.md)")
        self.check_dialect(label, engine.dialect)

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

    def table_names(self) -> list[str]:
        """The workload's tables in the benchmark database: those of :meth:`tables` (or ``schema_tables``); the
        encryption check and the storage table look at these."""
        return [t.name for t in self.tables()] or list(getattr(self, "schema_tables", ()))

    def sized_tables(self) -> list[str]:
        """The tables whose sizes the storage table lists: :meth:`table_names`; a workload that loads tables into
        another database of the same server adds them as ``database.table``."""
        return self.table_names()

    def estimated_input_bytes(self) -> int | None:
        """Bytes of input data the run will load, known before :meth:`prepare` (the disk guard's first check);
        None when unknown until the data exist."""
        return None

    def describe(self) -> str:
        """One line naming the workload and its main options, for the run's first console line."""
        options = ", ".join(f"{k} {v}" for k, v in self.shown_options().items())
        return self.name + (f" ({options})" if options else "")

    def shown_options(self) -> dict[str, Any]:
        """The options :meth:`describe` names: those given (a workload adds what it chose for the run)."""
        return dict(self.plan.workload_options)

    def plan_json(self) -> dict[str, Any]:
        """Workload parameters for the manifest."""
        return {}
