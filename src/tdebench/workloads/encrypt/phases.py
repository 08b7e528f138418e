"""The phase logic of the ``encrypt`` workload, free of any database: which second belongs to which phase, what a
phase measured, and the paired overhead of a phase against the baseline over trials.

A cycle (one value of ``threads``) runs the phases ``before`` (plaintext, steady), ``during_on`` (the engine
encrypting), ``after_on`` (encrypted, steady), and with the way back ``during_off`` and ``after_off``. Per-second
samples of one trial are not independent (a stall spans seconds, the buffer pool warms), so the unit of the paired
comparison is the trial: one mean per phase and trial, the ratio of a phase to its cycle's ``before`` per trial,
and a t interval over the trials' ratios.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from tdebench.stats.paired import PairedRatio, paired_ratio  # noqa: F401 - re-exported: the phase logic's API
from tdebench.workloads.tpcc.histogram import Histogram

STEADY = ("before", "after_on", "after_off")
SWITCHES = {"during_on": True, "during_off": False}  # phase -> switching towards encrypted?
ORDER = ("before", "during_restart_on", "after_restart", "during_on", "after_on", "before_rekey", "during_rekey",
         "after_rekey", "before_rotate", "during_rotate", "after_rotate", "before_off", "during_off", "after_off",
         "during_restart_off")
#: the steps a switch records (time_to_done, ...): the switch on, the re-keying, the rotation, the way back, the restarts
SWITCH_STEPS = ("restart_on", "on", "rekey", "rotate", "off", "restart_off")


@dataclass(frozen=True)
class Phase:
    """One phase of a cycle: ``name`` is ``t<threads>.<phase>``; ``start``/``end`` are seconds since the
    background's clock started."""

    name: str
    start: float
    end: float

    @property
    def kind(self) -> str:
        return self.name.rpartition(".")[2]


def holds_middle(phase: Phase, second: int) -> bool:
    """Whether the middle of the whole second ``[second, second+1)`` falls inside ``phase``."""
    return phase.start <= second + 0.5 < phase.end


def seconds_of(phase: Phase, phases: list[Phase]) -> list[int]:
    """The whole seconds (bins ``[i, i+1)``) that belong to ``phase``: those whose middle falls inside it; a phase
    shorter than a second that holds no middle gets the second it starts in (shared with its neighbour)."""
    bins = [i for i in range(int(math.floor(phase.start)), int(math.ceil(phase.end))) if holds_middle(phase, i)]
    if not bins and phase.end > phase.start:
        bins = [int(math.floor(phase.start))]
    return bins


def longest_zero_run(counts: list[int]) -> int:
    """The longest run of consecutive seconds in which nothing committed."""
    best = run = 0
    for n in counts:
        run = run + 1 if n == 0 else 0
        best = max(best, run)
    return best


@dataclass(frozen=True)
class PhaseStats:
    """What the background measured in one phase."""

    seconds: int
    committed: int
    new_orders: int
    latency: Histogram
    zero_seconds: int

    #: the metrics of :meth:`values`
    METRICS: ClassVar[tuple[str, ...]] = ("tpm", "nopm", "committed", "seconds", "zero_seconds", "latency_p50",
                                          "latency_p95", "latency_p99", "latency_max")

    @property
    def tps(self) -> float:
        return self.committed / self.seconds if self.seconds else 0.0

    def values(self) -> dict[str, tuple[float, str]]:
        """metric -> (value, unit) for the measurements (latencies only when something committed)."""
        out = {"tpm": (self.tps * 60.0, "tpm"), "nopm": (self.new_orders * 60.0 / max(self.seconds, 1), "nopm"),
               "committed": (float(self.committed), "txn"), "seconds": (float(self.seconds), "s"),
               "zero_seconds": (float(self.zero_seconds), "s")}
        if self.latency.count:
            for pct in (50, 95, 99):
                out[f"latency_p{pct}"] = (self.latency.percentile(pct) or 0.0, "s")
            out["latency_max"] = (self.latency.max_ns / 1e9, "s")
        return out


def phase_stats(bins: list[int], per_second: list[list[int]], latency: list[Histogram]) -> PhaseStats:
    """Sum the per-second series (``[committed, new_orders]`` and one histogram per second) over ``bins``."""
    merged, counts, new_orders = Histogram(), [], 0
    for i in bins:
        committed, orders = per_second[i] if i < len(per_second) else (0, 0)
        counts.append(committed)
        new_orders += orders
        if i < len(latency):
            merged.merge(latency[i])
    return PhaseStats(len(bins), sum(counts), new_orders, merged, longest_zero_run(counts))
