"""The terminal summary of an ``encrypt`` run: per config and thread count, the switch times and what the
background felt during and after each switch, against the cycle's own baseline (docs/workloads/encrypt.md)."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import median
from typing import Any

from rich.table import Table

from tdebench.stats.load import Measurements

_TEST = "encrypt"


def _cycles(measurements: Measurements, label: str) -> list[str]:
    steps = {k.step.split(".")[0] for k in measurements.series if k.config == label and k.test == _TEST}
    online = sorted((s for s in steps if s.startswith("t") and s[1:].isdigit()), key=lambda s: int(s[1:]))
    return online + (["offline"] if "offline" in steps else [])


def _median(measurements: Measurements, label: str, step: str, metric: str) -> float | None:
    values = [float(v) for k, sample in measurements.series.items() if (k.config, k.test, k.step, k.metric) ==
              (label, _TEST, step, metric) for v in sample.values]
    return median(values) if values else None


def _ratio(summary: dict[str, Any], phase: str, metric: str) -> str:
    entry = summary.get("phases", {}).get(phase, {}).get(metric)
    if not entry:
        return "–"
    text = f"{entry['mean_ratio']:.2f}"
    if entry.get("ci95_low") is not None:
        text += f" [{entry['ci95_low']:.2f}, {entry['ci95_high']:.2f}]"
    return text


def _left(in_scope: float | None, outside: float) -> str:
    """Old plaintext the scan found after the switch: in the spec's scope (a finding), and outside it."""
    if in_scope is None:
        return "–"
    text = "none in scope" if in_scope == 0 else f"{in_scope:.0f} hits in scope (finding)"
    return text + (f"; {outside:.0f} outside scope" if outside else "")


def _num(value: float | None, fmt: str) -> str:
    return "–" if value is None else format(value, fmt)


def encrypt_table(run_dir: Path, measurements: Measurements, labels: list[str]) -> Table:
    """One row per config and thread count: medians over the trials, ratios to ``before`` with 95% intervals."""
    table = Table(title="encrypt: switching on and back under the background (median over trials; ratio to the "
                        "cycle's before, mean [95% CI])", title_justify="left")
    for column in ("config", "threads", "on s", "rekey s", "off s", "peak extra disk", "tpm before",
                   "tpm during on", "tpm after on", "p95 during on", "longest txn on s", "plaintext left"):
        table.add_column(column, justify="left" if column == "config" else "right")
    for label in labels:
        path = run_dir / "samples" / label / "encrypt-summary.json"
        summary = json.loads(path.read_text()) if path.is_file() else {}
        for cycle in _cycles(measurements, label):
            left = _median(measurements, label, f"{cycle}.on.scan", "canary_hits_in_scope")
            known = _median(measurements, label, f"{cycle}.on.scan", "known_plaintext_hits_in_scope")
            found = None if left is None else (left or 0) + (known or 0)
            outside = _median(measurements, label, f"{cycle}.on.scan", "hits_outside_scope") or 0
            offline = cycle == "offline"
            peak = _median(measurements, label, f"{cycle}.on", "peak_extra_bytes")
            table.add_row(label, "offline (service stopped)" if offline else cycle[1:],
                          _num(_median(measurements, label, f"{cycle}.on", "time_to_done"), ".1f"),
                          _num(_median(measurements, label, f"{cycle}.rekey", "time_to_done"), ".1f"),
                          _num(_median(measurements, label, f"{cycle}.off", "time_to_done"), ".1f"),
                          "–" if peak is None else f"{peak / 2**20:.1f} MiB",
                          _num(_median(measurements, label, f"{cycle}.before", "tpm"), ".0f"),
                          "stopped" if offline else _ratio(summary, f"{cycle}.during_on", "tpm"),
                          _ratio(summary, f"{cycle}.after_on", "tpm"),
                          "stopped" if offline else _ratio(summary, f"{cycle}.during_on", "latency_p95"),
                          _num(_median(measurements, label, f"{cycle}.during_on", "latency_max"), ".3f"),
                          _left(found, outside))
    return table
