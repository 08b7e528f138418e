"""A workload's consistency conditions (its ``conditions`` section, tdebench.api.presentation): per engine, a row per
condition checked and per config whether it held.

Read from measurements (the section's test and step): ``condition_<N>_violations`` after every trial (a violation
fails the trial, but its count is kept), ``elapsed``, the seconds the check took, and ``nodes_differing`` for a
cluster whose nodes were compared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tdebench.api.presentation import Section
from tdebench.report.mdkit import md_table
from tdebench.report.fmt import DASH, fmt_value
from tdebench.report.htmlkit import Col, Safe, join, pill, table, tag
from tdebench.report.model import RunSummary

_METRIC = re.compile(r"^condition_(\d+)_violations$")


@dataclass
class ConsistencyTable:
    """One engine: per condition and config, the violation counts of each trial; per config the check times."""

    engine: str
    configs: list[str]
    conditions: list[int]
    section: Section
    counts: dict[tuple[int, str], list[float]] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)
    nodes: dict[str, list[float]] = field(default_factory=dict)  # a cluster's nodes differing from node 1


def consistency_tables(rs: RunSummary) -> list[ConsistencyTable]:
    """A table per engine that has consistency measurements (none for a workload without a conditions section)."""
    section = rs.presentation.section("conditions")
    if section is None:
        return []
    out = []
    for es in rs.engines:
        t = ConsistencyTable(es.engine, [], [], section)
        for row in rs.analysis.measurements.rows:
            key = row.key
            if (key.engine != es.engine or key.test != section.test or key.step != section.step
                    or key.config not in es.configs):
                continue
            match = _METRIC.match(key.metric)
            if match:
                t.counts.setdefault((int(match.group(1)), key.config), []).append(row.value)
            elif key.metric == "elapsed":
                t.seconds.setdefault(key.config, []).append(row.value)
            elif key.metric == "nodes_differing":
                t.nodes.setdefault(key.config, []).append(row.value)
        if t.counts:
            t.conditions = sorted({n for n, _ in t.counts})
            t.configs = [c for c in es.configs if any((n, c) in t.counts for n in t.conditions)]
            out.append(t)
    return out


def cell(values: list[float] | None) -> tuple[str, bool | None]:
    """("held in 3 of 3 trials", True), ("violated in 1 of 3 trials (at most 12 rows)", False) or (—, None)."""
    if not values:
        return DASH, None
    bad = [v for v in values if v > 0]
    if not bad:
        return f"held in {len(values)} of {len(values)} trials", True
    return f"violated in {len(bad)} of {len(values)} trials (at most {max(bad):g} rows)", False


def _seconds(values: list[float] | None) -> str:
    if not values:
        return DASH
    return f"{fmt_value(min(values), 's')} – {fmt_value(max(values), 's')}" if len(values) > 1 else \
        fmt_value(values[0], "s")


def _rows(t: ConsistencyTable) -> list[tuple[list[str], list[bool | None]]]:
    out = []
    for n in t.conditions:
        cells = [cell(t.counts.get((n, c))) for c in t.configs]
        out.append(([str(n), t.section.texts.get(str(n), "")] + [text for text, _ in cells], [ok for _, ok in cells]))
    nodes = [t.nodes.get(c) for c in t.configs]
    if any(nodes):
        cells = [cell(v) for v in nodes]
        out.append((["nodes", "every node's row counts and column sums = node 1's"] + [x for x, _ in cells],
                    [ok for _, ok in cells]))
    out.append((["", "time the check took"] + [_seconds(t.seconds.get(c)) for c in t.configs],
                [None] * len(t.configs)))
    return out


def html_section(tables: list[ConsistencyTable]) -> Safe:
    parts: list[object] = [tag("h2", tables[0].section.title)]
    for t in tables:
        cols = [Col("condition", True), Col("what must hold")] + [Col(c) for c in t.configs]
        body = []
        for texts, oks in _rows(t):
            body.append(texts[:2] + [text if ok is None else pill(text, "good" if ok else "bad")
                                     for text, ok in zip(texts[2:], oks)])
        parts += [tag("h3", t.engine), table(cols, body)]
    if tables[0].section.note:
        parts.append(tag("p", tables[0].section.note, class_="note"))
    return tag("section", join(parts), id="consistency")


def md_lines(tables: list[ConsistencyTable]) -> list[str]:

    out = [f"## {tables[0].section.title}", ""]
    for t in tables:
        out += [f"### {t.engine}", ""]
        out += md_table(["condition", "what must hold", *t.configs], [texts for texts, _ in _rows(t)], {0})
        out.append("")
    return out + ([tables[0].section.note, ""] if tables[0].section.note else [])
