"""What one ``encrypt`` trial records: per-phase measurements, the switches, the scans, the per-second series and
the paired summary over the measured trials so far (names in :mod:`tdebench.workloads.encrypt.workload`)."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tdebench.api.trial import Recorder
from tdebench.workloads.encrypt.controller import Switch, SwitchController
from tdebench.workloads.encrypt.phases import (ORDER, SWITCH_STEPS, Phase, PhaseStats, holds_middle, paired_ratio,
                                              phase_stats, seconds_of)
from tdebench.workloads.tpcc.driver import StepResult
from tdebench.workloads.tpcc.histogram import Histogram

TEST = "encrypt"
#: each trial's last switch on (the last cycle's online; the offline method's): the workload's headline, one step
#: for configs that switch online (``t<K>.on``) and offline (``offline.on``) alike
HEADLINE_STEP = "switch_on"
COMPARED = ("tpm", "latency_p95")
_KEPT = (*PhaseStats.METRICS, "time_to_done")  # what a trial keeps for the summary


@dataclass
class Series:
    """The trial's background windows laid end to end on one clock (a window starts at the next whole second after
    the previous one's last phase), with their phases, switches and the scans between them."""

    per_second: list[list[int]] = field(default_factory=list)
    second_latency: list[Histogram] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    switches: list[Switch] = field(default_factory=list)
    scans: dict[str, dict[str, Any]] = field(default_factory=dict)
    proofs: dict[str, dict[str, Any]] = field(default_factory=dict)  # rotation: the old key versions retired
    windows: list[tuple[int, int]] = field(default_factory=list)  # (first second, seconds) of each window
    errors: int = 0
    retries: int = 0
    latency: Histogram = field(default_factory=Histogram)
    offline: set[str] = field(default_factory=set)  # phases with the background stopped (no throughput measured)

    def add(self, background: StepResult, controller: SwitchController) -> None:
        offset = len(self.per_second)
        end = max([math.ceil(p.end) for p in controller.phases] + [len(background.per_second)])
        per_second = background.per_second[:end] + [[0, 0]] * (end - len(background.per_second))
        latency = background.second_latency[:end]
        latency += [Histogram() for _ in range(end - len(latency))]
        self.per_second += per_second
        self.second_latency += latency
        self.phases += [Phase(p.name, p.start + offset, p.end + offset) for p in controller.phases]
        for switch in controller.switches:  # onto the trial's clock
            switch.progress = [(t + offset, f) for t, f in switch.progress]
        self.switches += controller.switches
        self.windows.append((offset, end))
        self.errors += background.errors + background.gave_up
        self.retries += sum(background.retries.values())
        for hist in background.latency.values():
            self.latency.merge(hist)


    def add_offline(self, switch: Switch) -> None:
        """An offline switch between two windows: seconds with the background stopped, on the same clock."""
        offset, seconds = len(self.per_second), max(1, math.ceil(switch.seconds))
        self.per_second += [[0, 0] for _ in range(seconds)]
        self.second_latency += [Histogram() for _ in range(seconds)]
        name = f"{switch.name.rpartition('.')[0]}.during_{switch.action}"
        self.phases.append(Phase(name, offset, offset + seconds))
        self.offline.add(name)
        switch.start = float(offset)
        switch.progress = [(float(offset), 0.0), (offset + switch.seconds, 1.0)]
        self.switches.append(switch)
        self.windows.append((offset, seconds))


def trial(rec: Recorder, block: int, background: Series, rate: float, folder: Path,
          history: list[dict[str, float]]) -> list[str]:
    """Record the trial (files in ``folder``; a measured trial's figures appended to ``history``, the config's
    trials so far); returns failures (a baseline below ``rate``)."""
    failures: list[str] = []
    stats = {p.name: phase_stats(seconds_of(p, background.phases), background.per_second, background.second_latency)
             for p in background.phases if p.name not in background.offline}
    for name, s in stats.items():
        for metric, (value, unit) in s.values().items():
            rec.add(TEST, name, metric, value, unit)
    ratios = _ratios(stats)
    for (name, metric), value in ratios.items():
        rec.add(TEST, name, f"{'p95' if metric == 'latency_p95' else metric}_vs_before", value, "ratio")
    _record_switches(rec, background)
    ons = [s for s in background.switches if s.action in ("", "on") and s.on]
    if ons:
        rec.add(TEST, HEADLINE_STEP, "time_to_done", ons[-1].seconds, "s")
    for name, scan in background.scans.items():
        for metric in ("canary_hits_in_scope", "known_plaintext_hits_in_scope", "known_plaintext_found_in_scope",
                       "hits_outside_scope"):
            rec.add(TEST, f"{name}.scan", metric, scan[metric], "count")
    rec.add(TEST, "background", "errors", background.errors, "count")
    rec.add(TEST, "background", "retries", background.retries, "count")
    rec.add(TEST, "background", "latency_max", background.latency.max_ns / 1e9, "s")
    for name, s in stats.items():
        if rate and name.endswith(".before") and s.tps < rate:
            failures.append(f"{name}: the background reached {s.tps:.1f} transactions/s, below rate={rate:g} "
                            "(not lowered)")
    write_series(folder / f"encrypt-block{block:03d}.csv", background)
    write_facts(folder / f"encrypt-block{block:03d}.json", stats, background)
    if rec.status == "ok":
        history.append(
            {f"{name}/{metric}": value for name, s in stats.items() for metric, (value, _) in s.values().items()}
            | {f"{s.name}/time_to_done": s.seconds for s in background.switches})
    write_summary(folder / "encrypt-summary.json", history)
    return failures


def _record_switches(rec: Recorder, background: Series) -> None:
    """Every switch's figures (times, the engine's counters and sizes, the disk, stages) and rotations' proofs."""
    for switch in background.switches:
        rec.add(TEST, switch.name, "time_to_done", switch.seconds, "s")
        if switch.method == "offline":  # no workload connected from the method's start to the server serving again
            rec.add(TEST, switch.name, "downtime", switch.seconds, "s")
        rec.add(TEST, switch.name, "tablespaces", switch.tablespaces, "count")
        for metric in ("read_bytes", "write_bytes"):
            value = getattr(switch, metric)
            if value is not None:
                rec.add(TEST, switch.name, metric, value, "bytes")
        for counter, value in switch.counters.items():
            rec.add(TEST, switch.name, counter, value, "count")
        for metric, value in switch.applied.items():  # the engine's own sizes (e.g. the tables' bloat)
            if metric.endswith(("_bytes", "_count")) and isinstance(value, (int, float)):
                rec.add(TEST, switch.name, metric, value, "bytes" if metric.endswith("_bytes") else "count")
        for metric, value in switch.disk.items():
            if metric != "samples":
                rec.add(TEST, switch.name, metric, value, "bytes")
        for stage in switch.stages:
            if "seconds" in stage:
                rec.add(TEST, switch.name, f"{stage['name']}_seconds", stage["seconds"], "s")
            if "end_bytes" in stage:
                rec.add(TEST, switch.name, f"{stage['name']}_end_bytes", stage["end_bytes"], "bytes")
        copy = next((st.get("seconds") for st in switch.stages if st["name"] == "copy"), None)
        if copy and switch.applied.get("copied_bytes"):  # a switch that copies the data: its throughput
            rec.add(TEST, switch.name, "copy_bytes_per_s", switch.applied["copied_bytes"] / copy, "bytes/s")
    for name, proof in background.proofs.items():  # rotation by key version: the old versions retired
        for metric in ("left_behind", "restarted", "tables_read", "rows_read", "old_versions_destroyed"):
            if isinstance(proof.get(metric), (int, float)):
                rec.add(TEST, f"{name}.proof", metric, proof[metric], "count")


def _ratios(stats: dict[str, PhaseStats]) -> dict[tuple[str, str], float]:
    """Per phase and compared metric: the phase's value over its cycle's ``before``."""
    out: dict[tuple[str, str], float] = {}
    for name, s in stats.items():
        prefix, _, kind = name.rpartition(".")
        base = stats.get(f"{prefix}.before")
        if base is None or kind == "before":
            continue
        mine, theirs = s.values(), base.values()
        for metric in COMPARED:
            if metric in mine and metric in theirs and theirs[metric][0] > 0:
                out[(name, metric)] = mine[metric][0] / theirs[metric][0]
    return out


def series_owners(phases: list[Phase]) -> dict[int, str]:
    """second -> the phase its row names: the phase that holds the second's middle, except that a phase shorter
    than a second (a switch done in 0.6 s) names the second it starts in, which its figures share with the
    neighbour (:func:`seconds_of`): every phase has a row."""
    owner: dict[int, str] = {}
    short: dict[int, str] = {}
    for phase in phases:
        for i in seconds_of(phase, phases):
            if holds_middle(phase, i):
                owner[i] = phase.name
            else:
                short[i] = phase.name
    return {**owner, **short}


def write_series(path: Path, background: Series) -> None:
    """One row per second of the background's window: phase, commits, rates, latency percentiles, progress."""
    path.parent.mkdir(parents=True, exist_ok=True)
    owner = series_owners(background.phases)
    progress = sorted(t_f for s in background.switches for t_f in s.progress)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["second", "phase", "committed", "new_orders", "tpm_rate", "latency_p50", "latency_p95",
                      "latency_p99", "latency_max", "switch_progress", "background"])
        for i, (committed, orders) in enumerate(background.per_second):
            hist = background.second_latency[i] if i < len(background.second_latency) else Histogram()
            pcts = [hist.percentile(p) for p in (50, 95, 99)]
            done = [f for t, f in progress if t < i + 1]
            out.writerow([i, owner.get(i, ""), committed, orders, committed * 60,
                          *[f"{v:.6f}" if v is not None else "" for v in pcts],
                          f"{hist.max_ns / 1e9:.6f}" if hist.count else "",
                          f"{done[-1]:.4f}" if done and owner.get(i, "").rpartition(".")[2].startswith("during")
                          else "", "stopped" if owner.get(i, "") in background.offline else "running"])


def write_facts(path: Path, stats: dict[str, PhaseStats], series: Series) -> None:
    """The phases (seconds on the background's clock), the switches and the scans of one trial."""
    facts = {"phases": [{"name": p.name, "start_s": round(p.start, 3), "end_s": round(p.end, 3),
                         "seconds_counted": stats[p.name].seconds if p.name in stats else 0,
                         "background": "stopped" if p.name in series.offline else "running"}
                        for p in series.phases],
             "windows": [{"first_second": a, "seconds": n} for a, n in series.windows],
             "switches": [{k: v for k, v in asdict(s).items() if k != "progress"} | {"polls": len(s.progress)}
                          for s in series.switches],
             "scans": series.scans, "proofs": series.proofs}
    path.write_text(json.dumps(facts, indent=2, default=str) + "\n")


def summarize(history: list[dict[str, float]]) -> dict[str, Any]:
    """Per phase other than ``before``: the paired ratio of tpm and p95 to the cycle's ``before`` over the trials
    (mean and 95% t interval of the per-trial ratios), and the switch times."""
    out: dict[str, Any] = {"trials": len(history), "phases": {}, "switches": {}}
    names = sorted({k.rpartition("/")[0] for h in history for k in h})
    for name in names:
        prefix, _, kind = name.rpartition(".")
        if kind in ORDER and kind != "before":
            entry = {}
            for metric in COMPARED:
                pairs = [(h[f"{prefix}.before/{metric}"], h[f"{name}/{metric}"]) for h in history
                         if f"{prefix}.before/{metric}" in h and f"{name}/{metric}" in h]
                ratio = paired_ratio([b for b, _ in pairs], [o for _, o in pairs])
                if ratio is not None:
                    entry[metric] = ratio.as_dict()
            out["phases"][name] = entry
        elif kind in SWITCH_STEPS:
            times = [h[f"{name}/time_to_done"] for h in history if f"{name}/time_to_done" in h]
            out["switches"][name] = {"time_to_done_s": times, "mean_s": sum(times) / len(times) if times else None}
    return out


def earlier_trials(measurements: Path, label: str) -> list[dict[str, float]]:
    """The figures :func:`trial` keeps per measured trial, read back from a run's measurements.csv (a resumed run
    pairs its new trials with those of the runs before)."""
    blocks: dict[str, dict[str, float]] = {}
    if measurements.is_file():
        with open(measurements, newline="", encoding="utf-8") as handle:
            for r in csv.DictReader(handle):
                if (r["config"], r["test"], r["status"]) == (label, TEST, "ok") and r["metric"] in _KEPT:
                    blocks.setdefault(r["block"], {})[f"{r['step']}/{r['metric']}"] = float(r["value"])
    return [blocks[b] for b in sorted(blocks, key=int)]


def write_summary(path: Path, history: list[dict[str, float]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summarize(history), indent=2) + "\n")
