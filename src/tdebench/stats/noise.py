"""Trials that ran during a noise spike on the machine: flagged, never dropped.

The manifest's ``conditions`` hold, per trial, the host's steal time, the CPU other tenants used
(``foreign_cores``), the load average and the CPU frequency (:mod:`tdebench.measure.conditions`). A trial is
flagged when its steal time or other tenants' CPU is far above the run's own typical level: more than
``median + max(floor, 4 · 1.4826 · MAD)`` (MAD: median absolute deviation; floors 2 points of steal, 0.25 cores),
or when a CPU's frequency changed during it. Its values stay in every statistic; the report lists it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import median
from typing import Any

#: (key, floor of the threshold above the median, how the report names it)
WATCHED = (("steal_pct", 2.0, "steal time"), ("foreign_cores", 0.25, "other tenants' CPU"))
MAD_SCALE = 4 * 1.4826


@dataclass(frozen=True)
class Spike:
    """One flagged trial and why."""

    block: int
    config: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class NoiseSummary:
    """The run's typical machine state and its flagged trials."""

    trials: int
    medians: dict[str, float]
    thresholds: dict[str, float]
    max_load1: float | None
    frequency_changes: int
    spikes: list[Spike]


def _values(entries: list[Mapping[str, Any]], key: str) -> list[float]:
    return [float(e[key]) for e in entries if isinstance(e.get(key), (int, float))]


def summarize_noise(conditions: Iterable[Any]) -> NoiseSummary | None:
    """The run's noise summary from the manifest's ``conditions`` (measured blocks only; None when absent)."""
    entries = [e for e in conditions if isinstance(e, Mapping) and isinstance(e.get("block"), int)
               and e["block"] > 0]
    if not entries:
        return None
    medians, thresholds = {}, {}
    for key, floor, _ in WATCHED:
        values = _values(entries, key)
        if values:
            mid = median(values)
            mad = median(abs(v - mid) for v in values)
            medians[key], thresholds[key] = mid, mid + max(floor, MAD_SCALE * mad)
    spikes = []
    for e in entries:
        reasons = [f"{name} {float(e[key]):.2f}{'%' if key.endswith('pct') else ' cores'} "
                   f"(typical {medians[key]:.2f})"
                   for key, _, name in WATCHED if key in thresholds and isinstance(e.get(key), (int, float))
                   and float(e[key]) > thresholds[key]]
        if e.get("mhz_changed"):
            reasons.append(f"CPU frequency changed ({e.get('mhz_min')}–{e.get('mhz_max')} MHz)")
        if reasons:
            spikes.append(Spike(int(e["block"]), str(e.get("config", "")), tuple(reasons)))
    loads = _values(entries, "load1")
    return NoiseSummary(len(entries), medians, thresholds, max(loads) if loads else None,
                        sum(bool(e.get("mhz_changed")) for e in entries), spikes)


def spike_warning(summary: NoiseSummary | None) -> str | None:
    """One warning line for the flagged trials (None when there are none)."""
    if summary is None or not summary.spikes:
        return None
    shown = "; ".join(f"block {s.block} {s.config}: {', '.join(s.reasons)}" for s in summary.spikes[:4])
    more = f"; and {len(summary.spikes) - 4} more" if len(summary.spikes) > 4 else ""
    return (f"{len(summary.spikes)} of {summary.trials} trials ran during a noise spike on the machine ({shown}"
            f"{more}). They are kept in every statistic; if the interval is wider than expected, these blocks "
            "are where to look (Methods: machine state).")
