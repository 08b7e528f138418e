"""The ``encrypt`` workload's timeline: per second of one trial, the background's throughput and p95 latency, with
the restarts a key plugin needs, the switch on, the re-keying and the way back marked (``samples/<config>/encrypt-block<NNN>.csv``)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import matplotlib
import numpy as np

from tdebench.report import charts
from tdebench.report.charts import Chart

# phase kind -> (colour, legend label)
MARKS = {"during_restart_on": ("#e6ab02", "restart (load key plugin)"), "during_on": ("#d95f02", "switching on"),
         "during_rekey": ("#7570b3", "re-keying"), "during_off": ("#1b9e77", "switching off (the way back)"),
         "during_restart_off": ("#a6761d", "restart (unload key plugin)")}
STOPPED = "#cbd2d9"


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _spans(facts: dict) -> list[tuple[str, float, float, bool]]:
    """(phase kind, start, end, background stopped) of every switch phase."""
    out = []
    for p in facts.get("phases", []):
        kind = p["name"].rpartition(".")[2]
        if kind in MARKS:
            out.append((kind, float(p["start_s"]), float(p["end_s"]), p.get("background") == "stopped"))
    return out


def _number(text: str) -> float:
    return float(text) if text not in ("", None) else np.nan


def timeline_svg(rows: list[dict[str, str]], facts: dict, title: str) -> str | None:
    """Two panels sharing the time axis: TPM per second and p95 latency per second (ms)."""
    if not rows:
        return None
    t = np.array([int(r["second"]) + 0.5 for r in rows], dtype=float)
    stopped = np.array([r.get("background") == "stopped" for r in rows])
    tpm = np.array([_number(r["tpm_rate"]) for r in rows], dtype=float)
    outside = np.array([not r.get("phase") for r in rows])  # a window's last, partial second: in no phase
    tpm[stopped | outside] = np.nan  # no background: nothing measured, not zero throughput
    p95 = np.array([_number(r["latency_p95"]) * 1000 for r in rows], dtype=float)
    p95[outside] = np.nan
    with matplotlib.rc_context(charts.RC):
        fig = charts._figure(10.0, 5.0)
        top, bottom = fig.subplots(2, 1, sharex=True)
        top.plot(t, tpm, color=charts.TEXT, linewidth=1.2, marker="o", markersize=2.5)
        bottom.plot(t, p95, color="#c81e1e", linewidth=1.2, marker="o", markersize=2.5)
        for first, _ in [(w["first_second"], w["seconds"]) for w in facts.get("windows", [])][1:]:
            for ax in (top, bottom):  # a new background window (after a scan or an offline switch)
                ax.axvline(first, color=charts.PLAIN_COLOR, linewidth=0.8, linestyle=":")
        seen: set[str] = set()
        for kind, start, end, off in _spans(facts):
            colour, label = MARKS[kind]
            if off:
                label += " (offline: service stopped)"
            for ax in (top, bottom):
                ax.axvspan(start, end, facecolor=STOPPED if off else colour, alpha=0.55 if off else 0.2,
                           hatch="//" if off else None, edgecolor=colour, linewidth=0,
                           label=label if ax is top and label not in seen else None)
                ax.axvline(start, color=colour, linewidth=1.0)
                ax.axvline(end, color=colour, linewidth=1.0, linestyle="--")
            seen.add(label)
        top.set_ylabel("TPM (per second x 60)")
        bottom.set_ylabel("p95 latency (ms)")
        bottom.set_xlabel("seconds of the trial (background windows end to end)")
        for ax in (top, bottom):
            ax.grid(color=charts.GRID)
            ax.set_ylim(bottom=0)
        top.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=3, fontsize=9)
        top.set_title(title)
        return charts.to_svg(fig, title)


def timeline_charts(run_dir: Path, labels: list[str]) -> list[Chart]:
    """One timeline per config of an encrypt run: its last trial with a series (none when it has none)."""
    out = []
    for label in labels:
        folder = run_dir / "samples" / label
        series = sorted(folder.glob("encrypt-block*.csv"))
        if not series:
            continue
        path = series[-1]
        facts_path = path.with_suffix(".json")
        facts = json.loads(facts_path.read_text()) if facts_path.is_file() else {}
        block = path.stem.rpartition("block")[2]
        kinds = [MARKS[k][1].split(" (")[0] for k in MARKS if k in {s[0] for s in _spans(facts)}]
        kinds = list(dict.fromkeys(kinds))  # one "restart" for the two
        title = f"{label}: {', '.join(kinds) or 'the switch'} (trial {int(block)})"
        svg = timeline_svg(_rows(path), facts, title)
        if svg:
            caption = ("Per second of the trial: the background's committed transactions (x 60) and its p95 latency. "
                       "Shaded: the engine switching (solid line where it starts, dashed where it reports done); "
                       "grey hatched: an offline method with the background stopped (the service was down). "
                       "Dotted: a new background window (fresh virtual users) after an at-rest scan or an offline "
                       "switch, both with the background stopped; a window's last partial second is left out.")
            out.append(Chart(title, caption, svg))
    return out
