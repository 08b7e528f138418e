"""Which blocks a run does: the plan's trials, or, with ``--precision P``, blocks until the intervals are narrow.

After every measured block the overhead of every compared config (an encrypted config, or a second plain twin in
an A/A run) is checked with :class:`tdebench.stats.sequential.StoppingRule` on the values recorded in
measurements.csv, paired by block, the very values and code the report uses, for every figure the rule watches
(:func:`watched_series`: the workload's headlines, e.g. a user's reads, writes and each statement, or those
``--precision-metric`` names, each with its own target if given). The run stops when every config's 95% CI
half-width of every watched figure is at most its target (after the rule's pilot, ``--trials`` blocks), when
``--max-trials`` blocks are done, or before a block that would end after ``--max-time`` (judged by the mean block
so far). Progress shows each config's half-widths after each block; the manifest keeps the rule, what it watched,
the per-block history and the final decisions with their outcome sentences (``precision``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from tdebench.api.events import RunListener
from tdebench.api.plan import Block, RunPlan, watched_items
from tdebench.api.regime import ratio_of
from tdebench.api.workload import Workload
from tdebench.errors import UsageError
from tdebench.results.rundir import RunDirectory
from tdebench.runner.progress import human_duration
from tdebench.stats.load import Measurements, SeriesKey, load_measurements
from tdebench.api.keys import file_twin
from tdebench.stats.overhead import default_baselines
from tdebench.stats.seqinterval import paired_blocks
from tdebench.stats.sequential import Decision, StoppingRule, all_met

DEFAULT_MAX_TIME = 30 * 60.0  # --precision without --max-time or --max-trials: at most 30 minutes


PRECISION_KEYWORDS = ("cpu", "p50", "p95", "p99", "power", "common-wait")


def stopping_rule(plan: RunPlan, target: float | None = None) -> StoppingRule | None:
    """The plan's stopping rule (UsageError for a pilot below 3 blocks), for ``target`` points or the plan's
    ``--precision``; None without ``--precision``."""
    if plan.precision is None:
        return None
    return StoppingRule(target if target is not None else plan.precision, min_n=plan.trials, max_n=plan.max_trials)


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


@dataclass(frozen=True)
class Watched:
    """One figure the stopping rule watches: its name (a headline's, or a keyword such as ``cpu``), its series in
    measurements.csv, what a reader calls it, and the rule with its target."""

    name: str
    series: tuple[str, str, str]
    title: str
    rule: StoppingRule
    #: the workload's steps its value comes from (:attr:`tdebench.api.presentation.Headline.steps`); None: all
    steps: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, **dict(zip(("test", "step", "metric"), self.series)),
                "target_pp": self.rule.target_pp}


KEYWORD_TITLES = {"cpu": "server CPU time", "power": "Power@Size (TPC-H's power test)",
                  "common-wait": "time at a common wait per page read"}


def _keyword(plan: RunPlan, workload: Workload, name: str) -> tuple[str, str, str]:
    """The series of ``--precision-metric cpu`` (``p95``, ``power``, ...); UsageError when the workload has none."""
    series = workload.precision_target(name)
    if series is None:
        what = KEYWORD_TITLES.get(name, "latency percentile")
        raise UsageError(f"--precision-metric {name}: workload '{plan.workload}' records no {what} to target",
                         "leave --precision-metric out (the headlines), or use "
                         + ("--workload tpch with its power test" if name in ("power", "common-wait")
                            else "--workload tpcc or sysbench"))
    return series


def check_common_wait(plan: RunPlan) -> None:
    """UsageError unless every block reads its misses from the disk and every compared config's encryption runs in
    its server (:mod:`tdebench.stats.common_wait`), the only runs that record the figure."""
    from tdebench.runner.common_wait import page_sources, reads_from_disk  # noqa: PLC0415 - it asks the engines

    if not plan.memory_ratios or set(page_sources(plan).values()) != {"disk"}:
        raise UsageError("--precision-metric common-wait: the time at a common wait per page read is recorded only "
                         "when every config's cache misses are read from the disk",
                         "add --memory-ratio 0.25 (and leave out --page-source memory), or leave out "
                         "--precision-metric (the headline)")
    cached = [f"{r:g}" for r in plan.memory_ratios if not reads_from_disk(r)]
    if cached:
        raise UsageError(f"--precision-metric common-wait: at --memory-ratio {','.join(cached)} the cache holds "
                         "all the data, and no page is read from the disk", "give ratios below 1 only, e.g. "
                         "--memory-ratio 0.25, or leave out --precision-metric (the headline)")
    outside = [c.label for c in plan.configs if not c.spec.in_server]
    if outside:
        raise UsageError(f"--precision-metric common-wait: {', '.join(outside)} encrypt(s) in the filesystem, "
                         "which decrypts while the server waits for its reads: a common wait per read would hide "
                         "that work", "leave out --precision-metric (the headline)")


def watched_series(plan: RunPlan, workload: Workload) -> list[Watched]:
    """What ``--precision`` watches: every headline of the workload (``headline``, the default), or the headlines
    and keywords ``--precision-metric`` names, each with its own target where given (``writes=5%``); UsageError
    naming the workload's headlines for an unknown name. Empty without ``--precision``."""
    if plan.precision is None:
        return []
    headlines = {h.name: h for h in workload.headlines()}
    out: list[Watched] = []
    for name, target in watched_items(plan.precision_metric):
        rule = stopping_rule(plan, target)
        assert rule is not None
        if name in ("headline", "headlines"):
            out += [Watched(h.name, h.series, h.title, rule, h.steps) for h in headlines.values()]
        elif name in headlines:
            h = headlines[name]
            out.append(Watched(name, h.series, h.title, rule, h.steps))
        elif name in PRECISION_KEYWORDS:
            if name == "common-wait":
                check_common_wait(plan)
            out.append(Watched(name, _keyword(plan, workload, name), KEYWORD_TITLES.get(name, f"{name} latency"),
                               rule))
        else:
            known = ", ".join([*headlines, *(k for k in PRECISION_KEYWORDS if workload.precision_target(k))])
            raise UsageError(f"--precision-metric {name}: workload '{plan.workload}' has no figure '{name}' to "
                             f"watch (it has: {known})", f"name one of {known}, or leave --precision-metric out "
                             "for every headline (docs/precision.md)")
    unique: dict[str, Watched] = {}
    for w in out:  # a name given with its own target wins over the same headline from "headline"
        if w.name not in unique or w.rule.target_pp != plan.precision:
            unique[w.name] = w
    return list(unique.values())


def steps_to_skip(watched: list[Watched], met: set[str]) -> frozenset[str]:
    """The steps no watched figure still needs: those of the figures ``met`` (by every config), less those of the
    figures still open; none when an open figure does not name its steps (it may need all of them)."""
    still_open = [w for w in watched if w.name not in met]
    if not still_open or any(w.steps is None for w in still_open):
        return frozenset()
    done = {s for w in watched if w.name in met and w.steps is not None for s in w.steps}
    return frozenset(done - {s for w in still_open for s in w.steps or ()})


def check_precision(plan: RunPlan, watched: list[Watched], workload: str) -> None:
    """UsageError before any work when ``--precision`` cannot be applied to this plan."""
    if plan.precision is None:
        return
    stopping_rule(plan)
    if not watched:
        raise UsageError(f"--precision needs a headline figure, and workload '{workload}' has none",
                         "use --workload tpch, crud, tpcc, sysbench, sql or replay, or give a fixed --trials "
                         "without --precision")
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
        check_precision(plan, watched_series(plan, workload), plan.workload)
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

    def __init__(self, plan: RunPlan, rundir: RunDirectory, watched: list[Watched],
                 manifest: dict[str, Any], ui: RunListener, started: float | None = None) -> None:
        self.plan = plan
        self.rundir = rundir
        self.watched = watched
        self.manifest = manifest
        self.ui = ui
        self.started = time.monotonic() if started is None else started
        self.rule = stopping_rule(plan)
        self.max_time = plan.max_time
        if self.rule is not None and plan.max_time is None and plan.max_trials is None:
            self.max_time = DEFAULT_MAX_TIME
        #: watched name -> config -> its latest decision
        self.decisions: dict[str, dict[str, Decision]] = {w.name: {} for w in watched}
        self.stopped_by: str | None = None
        self.stop_reasons: dict[str, str | None] = {}  # with a memory sweep: how each ratio's configs ended
        self.blocks_run = 0  # measured blocks yielded (warm-up left out)
        self.skip_steps: frozenset[str] = frozenset()  # steps the next blocks leave out (steps_to_skip)
        self._durations: list[float] = []
        self._pace_said: set[str] = set()  # what :meth:`_say_pace` has said in this decision
        if self.rule is not None:
            first = watched[0].series if watched else ("", "", "")
            self.manifest["precision"] = {"rule": self.rule.manifest(), "headline": dict(zip(
                ("test", "step", "metric"), first)), "target": plan.precision_metric,
                "watched": [w.to_json() for w in watched], "max_time_s": self.max_time,
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
        self.skip_steps = frozenset()
        self._pace_said = set()
        for block in blocks:
            if self._out_of_time(deadline):
                self.stopped_by = "--max-time"
                return
            t0 = time.monotonic()
            self.blocks_run += not block.warmup
            yield replace(block, skip_steps=self.skip_steps) if self.skip_steps and not block.warmup else block
            if block.number not in done:
                self._durations.append(time.monotonic() - t0)
            if block.warmup or self.rule is None:
                continue
            if self._check(block, ratio):
                break
            self._say_pace(deadline)
        else:
            if self.rule is not None and self.plan.memory_ratios:
                self.stopped_by = "--max-trials"  # the ratio's block numbers are used up
        if self.rule is not None and ratio is not None:  # how this ratio's configs ended
            self.stop_reasons.update({k: self.stopped_by for k in self._configs() if ratio_of(k) == ratio})
            self._record()

    def _configs(self) -> list[str]:
        return list(dict.fromkeys(c for by in self.decisions.values() for c in by))

    def _out_of_time(self, deadline: float | None) -> bool:
        if deadline is None or not self._durations:
            return False
        elapsed = time.monotonic() - self.started
        return elapsed + float(np.mean(self._durations)) > deadline

    def _check(self, block: Block, ratio: float | None = None) -> bool:
        """Decisions after ``block``; True when the run (or ``ratio``'s part of it) should stop."""
        assert self.rule is not None and self.watched
        try:
            m = load_measurements(self.rundir.measurements_path)
        except OSError:
            return False
        mine: dict[str, dict[str, Decision]] = {}
        for w in self.watched:
            found = decisions_from(m, w.rule, w.series, self.plan.workload)
            mine[w.name] = {k: d for k, d in found.items() if ratio_of(k) == ratio}
            self.decisions[w.name] = {**self.decisions[w.name], **mine[w.name]}
        for label in dict.fromkeys(c for by in mine.values() for c in by):
            self.ui.message(f"precision {label}: " + progress_line({n: by[label] for n, by in mine.items()
                                                                    if label in by}))
        entry = {"block": block.number, "elapsed_s": round(time.monotonic() - self.started, 3),
                 "decisions": _history(self.decisions[self.watched[0].name])}
        if len(self.watched) > 1:
            entry["headlines"] = {name: _history(by) for name, by in self.decisions.items()}
        self._skip_met(mine, entry)
        self.manifest["precision"]["history"].append(entry)
        self._record()
        if all(all_met(by) for by in mine.values()):
            self.stopped_by = "target met"
            return True
        if self.plan.max_trials is not None and block.number % self.plan.regime_span >= self.plan.max_trials:
            self.stopped_by = "--max-trials"
            return True
        return False

    def _say_pace(self, deadline: float | None) -> None:
        """Say once, at the pace :meth:`_out_of_time` judges by, that the time limit ends the run before the rule's
        pilot (then the target cannot be met whatever the blocks show), and once that it ends it before the blocks
        the rule asks for; each with a ``--max-time`` that would fit them."""
        if deadline is None or self.rule is None or not self._durations or self.plan.memory_ratios:
            return  # a memory sweep's deadline is a ratio's share of the time: no one --max-time to suggest
        pace = float(np.mean(self._durations))
        n = self.blocks_run  # a resumed run's blocks count towards the pilot too
        needed = [d.needed_n for by in self.decisions.values() for d in by.values()
                  if not d.met and d.needed_n is not None]
        for what, blocks in (("pilot", self.rule.min_n), ("needed", max(needed, default=0))):
            if what in self._pace_said or blocks <= n or (what == "needed" and n < self.rule.min_n):
                continue  # the blocks needed are guessed from the pilot's blocks only once it is over
            ends = time.monotonic() - self.started + (blocks - n) * pace
            if ends <= deadline:
                continue
            self._pace_said.add(what)
            whose = (f"the rule's pilot of {blocks} blocks" if what == "pilot"
                     else f"the {blocks} blocks the rule now asks for")
            self.ui.message(f"precision: at {pace:.0f} s a block, {whose} would end about "
                            f"{human_duration(ends)} from the start, after the time limit ({human_duration(deadline)}"
                            f"); --max-time {math.ceil((ends + pace) / 60)}m would give the rule "
                            + ("its pilot" if what == "pilot" else "them"))

    def _skip_met(self, mine: dict[str, dict[str, Decision]], entry: dict[str, Any]) -> None:
        """After a block: the steps the next blocks leave out, because every figure that needs them has met its
        target for every config (kept per block in the history, said once when it changes)."""
        if self.plan.schedule == "block":  # a block runs whole trials: nothing to leave out
            return
        configs = {c for by in mine.values() for c in by}
        met = {name for name, by in mine.items() if by and set(by) >= configs and all_met(by)}
        skip = steps_to_skip(self.watched, met)
        if skip:
            entry["skip_steps"] = sorted(skip)
        if skip != self.skip_steps:
            if skip:
                done = ", ".join(w.name for w in self.watched if w.name in met)
                self.ui.message(f"precision: {done} met for every config; the next blocks leave out what no open "
                                f"figure needs ({len(skip)} step{'s' if len(skip) != 1 else ''}: "
                                f"{', '.join(sorted(skip))})")
            self.skip_steps = skip
            self._durations = []  # the next blocks are shorter: judge --max-time by them alone

    def _record(self) -> None:
        entry = self.manifest["precision"]
        outcomes: dict[str, dict[str, str]] = {}
        for name, by in self.decisions.items():
            outcomes[name] = {k: d.outcome(stopped_by=None if d.met else self.stop_reasons.get(k, self.stopped_by))
                              for k, d in by.items()}
        first = self.watched[0].name if self.watched else ""
        entry["decisions"] = {k: d.as_dict() for k, d in self.decisions.get(first, {}).items()}
        entry["stopped_by"] = self.stopped_by
        if len(self.watched) > 1:
            entry["headlines"] = {name: {"decisions": {k: d.as_dict() for k, d in by.items()},
                                         "outcome": outcomes[name]} for name, by in self.decisions.items()}
            entry["outcome"] = {k: " ".join(f"{name}: {texts[k]}" for name, texts in outcomes.items() if k in texts)
                                for k in self._configs()}
        else:
            entry["outcome"] = outcomes.get(first, {})
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


def progress_line(decisions: dict[str, Decision]) -> str:
    """One config's state after a block: the rule's line for one watched figure; for several, each one's
    half-width and target, then what is left (e.g. ``n = 12: reads ±1.40% (met), writes ±3.10% (target ±2%);
    1 of 2 not met, about 30 blocks in all (writes)``)."""
    if len(decisions) == 1:
        return next(iter(decisions.values())).progress()
    n = max(d.n for d in decisions.values())
    parts = [f"{name} " + ("—" if not math.isfinite(d.half_width_pp) else f"±{d.half_width_pp:.2f}%")
             + (" (met)" if d.met else f" (target ±{d.target_pp:g}%)") for name, d in decisions.items()]
    open_ = {name: d for name, d in decisions.items() if not d.met}
    if not open_:
        return f"n = {n}: " + ", ".join(parts) + "; all met"
    if n < min(d.min_n for d in decisions.values()):
        state = "pilot"
    else:
        state = f"{len(open_)} of {len(decisions)} not met"
    known = {name: d.needed_n for name, d in open_.items() if d.needed_n is not None}
    if len(known) < len(open_):
        tail = ", the blocks needed cannot be estimated yet" if any(
            not math.isfinite(d.half_width_pp) for d in open_.values()) else ", more than a million blocks needed"
    else:
        slowest = max(known, key=lambda k: known[k])
        tail = f", about {known[slowest]} blocks in all ({slowest})"
    return f"n = {n}: " + ", ".join(parts) + f"; {state}{tail}"


def _history(by: dict[str, Decision]) -> dict[str, Any]:
    return {k: {"n": d.n, "half_width_pp": _finite(d.half_width_pp), "estimate_pct": d.estimate_pct,
                "needed_n": d.needed_n} for k, d in by.items()}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
