"""Faults injected by ``--fault`` (docs/faults.md): per flagged trial, what was done, how the node came back, what
the cluster committed meanwhile, and the trial's headline beside the median of the unflagged trials.

Read from the manifest's ``faults`` (written by :mod:`tdebench.runner.faults`); the flagged trials' values are
nowhere else in the report: their rows have status ``fault`` and no interval or test uses them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tdebench.api.faults import KEYSERVER_DOWN, outage_text
from tdebench.report.fmt import DASH, fmt_value
from tdebench.report.htmlkit import Col, Safe, join, table, tag
from tdebench.report.mdkit import md_table
from tdebench.report.model import RunSummary
from tdebench.stats.load import SeriesKey

HEADERS = ["config", "block", "fault", "node", "rejoined by", "to Synced", "commits/s before", "commits/s while out",
           "trial's headline (flagged)", "median of unflagged trials"]
NOTE = ("A trial with a fault is flagged: its rows have status 'fault' in measurements.csv and are left out of every "
        "median, interval and test of this report (overhead.csv and summary.csv count them in n_faulted); its headline "
        "is shown here only. Commits are the write sets the cluster committed (node 1's wsrep_last_committed) per "
        "second, from the start of the trial to the kill and from the kill until the node was Synced or the trial "
        "ended. The trial waits for the rejoin before the next one starts.")


def entries(rs: RunSummary) -> list[dict[str, Any]]:
    faults = rs.manifest.get("faults")
    return [f for f in faults if isinstance(f, dict)] if isinstance(faults, list) else []


def _median_unflagged(rs: RunSummary, entry: dict[str, Any]) -> float | None:
    head = entry.get("headline") or {}
    for key, sample in rs.analysis.measurements.series.items():
        if key.config == entry.get("config") and (key.test, key.step, key.metric) == (
                head.get("test"), head.get("step"), head.get("metric")):
            return float(np.median(sample.values))
    return None


def _unit(rs: RunSummary, entry: dict[str, Any]) -> str:
    head = entry.get("headline") or {}
    for key, unit in rs.analysis.measurements.units.items():
        if isinstance(key, SeriesKey) and (key.test, key.step, key.metric) == (
                head.get("test"), head.get("step"), head.get("metric")):
            return unit
    return ""


def _num(x: object, unit: str = "") -> str:
    return fmt_value(float(x), unit) if isinstance(x, (int, float)) and not isinstance(x, bool) else DASH


def rows(rs: RunSummary) -> list[list[str]]:
    out = []
    for e in entries(rs):
        head = e.get("headline") or {}
        unit = _unit(rs, e)
        name = f"{head.get('step', '')} {head.get('metric', '')}".strip()
        value = _num(head.get("value"), unit)
        transfer = e.get("transfer") or (e.get("error") or e.get("note") or "not injected")
        if str(e.get("fault", "")).startswith(KEYSERVER_DOWN) and e.get("injected"):
            transfer = outage_text(e)
        out.append([str(e.get("config")), str(e.get("block")), str(e.get("fault")), str(e.get("node")),
                    str(transfer), _num(e.get("seconds_to_synced"), "s"), _num(e.get("commits_per_s_before")),
                    _num(e.get("commits_per_s_while_out")), f"{name}: {value}" if name else value,
                    _num(_median_unflagged(rs, e), unit)])
    return out


def html_section(rs: RunSummary) -> Safe:
    cols = [Col(h, i in (1, 5, 6, 7, 9)) for i, h in enumerate(HEADERS)]
    return tag("section", join([tag("h2", "Faults"), table(cols, rows(rs)), tag("p", NOTE, class_="note")]),
               id="faults")


def md_lines(rs: RunSummary) -> list[str]:
    return ["## Faults", "", *md_table(HEADERS, rows(rs), {1, 5, 6, 7, 9}), "", NOTE, ""]
