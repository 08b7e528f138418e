"""Which blocks a run does: the plan's trials, or, with ``--precision P``, blocks until the interval is narrow.

After every measured block the headline overhead of every compared config (an encrypted config, or a second
plain twin in an A/A run) is checked with :class:`tdebench.stats.sequential.StoppingRule` on the values recorded
in measurements.csv, paired by block, the very values and code the report uses. The run stops when every
config's 95% CI half-width is at most P (after the rule's pilot, ``--trials`` blocks), when ``--max-trials``
blocks are done, or before a block that would end after ``--max-time`` (judged by the mean block so far).
Progress shows each config's half-width after each block; the manifest keeps the rule, the per-block history and
the final decisions with their outcome sentence (``precision``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from tdebench.api.events import RunListener
from tdebench.api.plan import Block, RunPlan
from tdebench.api.regime import ratio_of
from tdebench.api.workload import Workload
from tdebench.errors import UsageError
from tdebench.results.rundir import RunDirectory
from tdebench.stats.load import Measurements, SeriesKey, load_measurements
from tdebench.api.keys import file_twin
from tdebench.stats.overhead import default_baselines
from tdebench.stats.seqinterval import paired_blocks
from tdebench.stats.sequential import Decision, StoppingRule, all_met

DEFAULT_MAX_TIME = 30 * 60.0  # --precision without --max-time or --max-trials: at most 30 minutes


def stopping_rule(plan: RunPlan) -> StoppingRule | None:
    """The plan's stopping rule (UsageError for a pilot below 3 blocks), None without ``--precision``."""
    if plan.precision is None:
        return None
    return StoppingRule(plan.precision, min_n=plan.trials, max_n=plan.max_trials)


def compared_labels(plan: RunPlan) -> dict[str, str]:
    """config -> its baseline, for every config compared with a plain twin (encrypted ones, and second plain
    twins of an A/A run), as :func:`tdebench.stats.overhead.default_baselines` will pair them."""
    first: dict[str, str] = {}
    out: dict[str, str] = {}
    for c in plan.configs:
        if c.spec.is_plain and c.engine not in first:
            first[c.engine] = c.label
    for c in plan.configs:
        base = file_twin(c.label, plan.labels) or first.get(c.engine)  # a key server's config: its file keys
        if base is not None and c.label != base:
            out[c.label] = base
    return out


def precision_series(plan: RunPlan, workload: Workload) -> tuple[str, str, str] | None:
    """(test, step, metric) that ``--precision`` watches: the workload's headline, or what ``--precision-metric``
    names (its server CPU time or a latency percentile); UsageError when the workload records no such series."""
    series = workload.precision_target(plan.precision_metric)
    if series is None and plan.precision_metric != "headline":
        what = {"cpu": "server CPU time", "power": "Power@Size (TPC-H's power test)"}.get(plan.precision_metric,
                                                                                          "latency percentile")
        raise UsageError(f"--precision-metric {plan.precision_metric}: workload '{plan.workload}' records no {what} "
                         "to target", "leave --precision-metric out (the headline), or use "
                         + ("--workload tpch with its power test" if plan.precision_metric == "power"
                            else "--workload tpcc or sysbench"))
    return series


def check_precision(plan: RunPlan, headline: tuple[str, str, str] | None, workload: str) -> None:
    """UsageError before any work when ``--precision`` cannot be applied to this plan."""
    if plan.precision is None:
        return
    stopping_rule(plan)
    if headline is None:
        raise UsageError(f"--precision needs a headline figure, and workload '{workload}' has none",
                         "use --workload tpch, crud, tpcc or sysbench, or give a fixed --trials without --precision")
    if not compared_labels(plan):
        raise UsageError("--precision needs a config to compare with a plain twin (encryption none)",
                         "list none and at least one other spec (or none,none for an A/A test) in --encryption")


class _NoFiles:
    """A run directory that is not there yet (the workload is only asked for its headline)."""

    path = Path(".")

    def answers_dir(self, config_label: str) -> Path:
        raise RuntimeError("no run directory yet")


def check_run_options(plan: RunPlan) -> None:
    """Before the run directory exists: --precision applies to the plan, --restart-twins to its engines, --pin
    and --nice to this machine."""
    from tdebench.engines import get_engine
    from tdebench.runner.pinning import check_nice, cpu_split
    from tdebench.runner.restarts import decide
    from tdebench.workloads import make_workload

    decide(plan, {c.engine: get_engine(c.engine) for c in plan.configs})

    workload = make_workload(plan, _NoFiles())
    if plan.repeat > 1 and workload.pairs_by_round:
        raise UsageError(f"--repeat does not apply to --workload {plan.workload}: its rounds per block come from "
                         "--duration / --slice", "leave --repeat out; give e.g. --duration 60s --slice 5s for 12 rounds")
    if plan.precision is not None:
        check_precision(plan, precision_series(plan, workload), plan.workload)
    if plan.pin:
        cpu_split()
    check_nice(plan.nice)


def decisions_from(m: Measurements, rule: StoppingRule, headline: tuple[str, str, str],
                   workload: str) -> dict[str, Decision]:
    """The stopping rule's decision for every compared config of recorded measurements."""
    test, step, metric = headline
    out = {}
    engines = {k.config: k.engine for k in m.all_keys()}
    for config, base in default_baselines(m).items():
        key = SeriesKey(engines.get(config, ""), config, workload, test, step, metric)
        plain, values = paired_blocks(m, key, base)
        if plain.size and (plain <= 0).any() or values.size and (values <= 0).any():
            continue  # no logarithm: the report says why (no interval of this kind)
        out[config] = rule.check_paired(plain, values)
    return out


class BlockSequence:
    """Yields the blocks to run and decides, after each, whether to go on."""

    def __init__(self, plan: RunPlan, rundir: RunDirectory, headline: tuple[str, str, str] | None,
                 manifest: dict[str, Any], ui: RunListener, started: float | None = None) -> None:
        self.plan = plan
        self.rundir = rundir
        self.headline = headline
        self.manifest = manifest
        self.ui = ui
        self.started = time.monotonic() if started is None else started
        self.rule = stopping_rule(plan)
        self.max_time = plan.max_time
        if self.rule is not None and plan.max_time is None and plan.max_trials is None:
            self.max_time = DEFAULT_MAX_TIME
        self.decisions: dict[str, Decision] = {}
        self.stopped_by: str | None = None
        self.stop_reasons: dict[str, str | None] = {}  # with a memory sweep: how each ratio's configs ended
        self.blocks_run = 0  # measured blocks yielded (warm-up left out)
        self._durations: list[float] = []
        if self.rule is not None:
            self.manifest["precision"] = {"rule": self.rule.manifest(), "headline": dict(zip(
                ("test", "step", "metric"), headline or ("", "", ""))), "target": plan.precision_metric,
                "max_time_s": self.max_time,
                "history": self.manifest.get("precision", {}).get("history", [])}

    def blocks(self, done: frozenset[int] | set[int] = frozenset()) -> Iterator[Block]:
        """The blocks to run, in order; ``done``: blocks completed before a resume (they take no time). Without a
        stopping rule the plan's own (finite) blocks; with one, blocks without end, and with a memory sweep the
        rule applies ratio by ratio: each ratio's blocks run until its configs meet the target or its share of
        the time left (the time left over the ratios left) is used up."""
        if self.rule is None:
            yield from self._sequence(self.plan.blocks(), done, None, self.max_time)
        elif not self.plan.memory_ratios:
            yield from self._sequence(self.plan.iter_blocks(), done, None, self.max_time)
        else:
            ratios = self.plan.memory_ratios
            for i, ratio in enumerate(ratios):
                budget = None
                if self.max_time is not None:  # an even share of what is left for this ratio and the ones after it
                    left = self.max_time - (time.monotonic() - self.started)
                    budget = time.monotonic() - self.started + left / (len(ratios) - i)
                self._durations = []
                yield from self._sequence(self.plan.iter_regime_blocks(i), done, ratio, budget)
        self._finish()

    def _sequence(self, blocks: Iterator[Block] | list[Block], done: frozenset[int] | set[int],
                  ratio: float | None, deadline: float | None) -> Iterator[Block]:
        """The blocks of one stopping decision (the run's, or one memory ratio's)."""
        self.stopped_by = None
        for block in blocks:
            if self._out_of_time(deadline):
                self.stopped_by = "--max-time"
                return
            t0 = time.monotonic()
            self.blocks_run += not block.warmup
            yield block
            if block.number not in done:
                self._durations.append(time.monotonic() - t0)
            if block.warmup or self.rule is None:
                continue
            if self._check(block, ratio):
                break
        else:
            if self.rule is not None and self.plan.memory_ratios:
                self.stopped_by = "--max-trials"  # the ratio's block numbers are used up
        if self.rule is not None and ratio is not None:  # how this ratio's configs ended
            self.stop_reasons.update({k: self.stopped_by for k in self.decisions if ratio_of(k) == ratio})
            self._record()

    def _out_of_time(self, deadline: float | None) -> bool:
        if deadline is None or not self._durations:
            return False
        elapsed = time.monotonic() - self.started
        return elapsed + float(np.mean(self._durations)) > deadline

    def _check(self, block: Block, ratio: float | None = None) -> bool:
        """Decisions after ``block``; True when the run (or ``ratio``'s part of it) should stop."""
        assert self.rule is not None and self.headline is not None
        try:
            m = load_measurements(self.rundir.measurements_path)
        except OSError:
            return False
        found = decisions_from(m, self.rule, self.headline, self.plan.workload)
        mine = {k: d for k, d in found.items() if ratio_of(k) == ratio}
        self.decisions = {**self.decisions, **mine}
        for label, d in mine.items():
            self.ui.message(f"precision {label}: {d.progress()}")
        entry = {"block": block.number, "elapsed_s": round(time.monotonic() - self.started, 3),
                 "decisions": {k: {"n": d.n, "half_width_pp": _finite(d.half_width_pp),
                                   "estimate_pct": d.estimate_pct} for k, d in self.decisions.items()}}
        self.manifest["precision"]["history"].append(entry)
        self._record()
        if all_met(mine):
            self.stopped_by = "target met"
            return True
        if self.plan.max_trials is not None and block.number % self.plan.regime_span >= self.plan.max_trials:
            self.stopped_by = "--max-trials"
            return True
        return False

    def _record(self) -> None:
        entry = self.manifest["precision"]
        entry["decisions"] = {k: d.as_dict() for k, d in self.decisions.items()}
        entry["stopped_by"] = self.stopped_by
        entry["outcome"] = {k: d.outcome(stopped_by=None if d.met else self.stop_reasons.get(k, self.stopped_by))
                            for k, d in self.decisions.items()}
        if self.stop_reasons:
            entry["stopped_by_config"] = dict(self.stop_reasons)
        self.rundir.write_manifest(self.manifest)

    def _finish(self) -> None:
        """Say how the run ended (the manifest keeps it)."""
        if self.rule is None:
            if self.stopped_by:
                self.manifest["stopped_by"] = self.stopped_by
                self.ui.message(f"stopped by {self.stopped_by} before trial {len(self._durations)}")
            return
        self._record()
        for label, text in self.manifest["precision"]["outcome"].items():
            self.ui.message(f"{label}: {text}")


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
