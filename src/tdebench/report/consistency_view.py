"""TPC-C consistency conditions: per engine, a row per condition checked and per config whether it held.

Read from measurements (test ``tpcc``, step ``consistency``): ``condition_<N>_violations`` after every trial
(a violation fails the trial, but its count is kept) and ``elapsed``, the seconds the check took.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tdebench.report.mdkit import md_table
from tdebench.report.fmt import DASH, fmt_value
from tdebench.report.htmlkit import Col, Safe, join, pill, table, tag
from tdebench.report.model import RunSummary

STEP = "consistency"
_METRIC = re.compile(r"^condition_(\d+)_violations$")
# TPC-C clause 3.3.2; "null" is tdebench's O_CARRIER_ID 0 / OL_DELIVERY_D 1900-01-01
CONDITION_TEXTS = {
    1: "W_YTD = sum(D_YTD)",
    2: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
    3: "max(NO_O_ID) - min(NO_O_ID) + 1 = NEW-ORDER rows",
    4: "sum(O_OL_CNT) = ORDER-LINE rows, per district",
    5: "O_CARRIER_ID null iff a NEW-ORDER row exists",
    6: "O_OL_CNT = ORDER-LINE rows, per order",
    7: "OL_DELIVERY_D null iff O_CARRIER_ID null",
    8: "W_YTD = sum(H_AMOUNT)",
    9: "D_YTD = sum(H_AMOUNT)",
    10: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)",
    11: "count(ORDER) - count(NEW-ORDER) = 2100",
    12: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
}
NOTE = ("Checked after every trial, on the data the trial left (TPC-C clause 3.3.2). tdebench stores no NULL: an "
        "undelivered order has O_CARRIER_ID 0 and its lines OL_DELIVERY_D 1900-01-01, which is what \"null\" means "
        "here. Condition 11 is not checked: it holds only until the first Delivery. A trial that violates a "
        "condition fails; the cell says in how many trials that happened and the largest count of violating rows.")


@dataclass
class ConsistencyTable:
    """One engine: per condition and config, the violation counts of each trial; per config the check times."""

    engine: str
    configs: list[str]
    conditions: list[int]
    counts: dict[tuple[int, str], list[float]] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)
    nodes: dict[str, list[float]] = field(default_factory=dict)  # a cluster's nodes differing from node 1


def consistency_tables(rs: RunSummary) -> list[ConsistencyTable]:
    """A table per engine that has consistency measurements (none for other workloads)."""
    out = []
    for es in rs.engines:
        t = ConsistencyTable(es.engine, [], [])
        for row in rs.analysis.measurements.rows:
            if row.engine != es.engine or row.test != "tpcc" or row.step != STEP or row.config not in es.configs:
                continue
            match = _METRIC.match(row.metric)
            if match:
                t.counts.setdefault((int(match.group(1)), row.config), []).append(row.value)
            elif row.metric == "elapsed":
                t.seconds.setdefault(row.config, []).append(row.value)
            elif row.metric == "nodes_differing":
                t.nodes.setdefault(row.config, []).append(row.value)
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
        out.append(([str(n), CONDITION_TEXTS.get(n, "")] + [text for text, _ in cells], [ok for _, ok in cells]))
    nodes = [t.nodes.get(c) for c in t.configs]
    if any(nodes):
        cells = [cell(v) for v in nodes]
        out.append((["nodes", "every node's row counts and column sums = node 1's"] + [x for x, _ in cells],
                    [ok for _, ok in cells]))
    out.append((["", "time the check took"] + [_seconds(t.seconds.get(c)) for c in t.configs],
                [None] * len(t.configs)))
    return out


def html_section(tables: list[ConsistencyTable]) -> Safe:
    parts: list[object] = [tag("h2", "TPC-C consistency")]
    for t in tables:
        cols = [Col("condition", True), Col("what must hold")] + [Col(c) for c in t.configs]
        body = []
        for texts, oks in _rows(t):
            body.append(texts[:2] + [text if ok is None else pill(text, "good" if ok else "bad")
                                     for text, ok in zip(texts[2:], oks)])
        parts += [tag("h3", t.engine), table(cols, body)]
    parts.append(tag("p", NOTE, class_="note"))
    return tag("section", join(parts), id="consistency")


def md_lines(tables: list[ConsistencyTable]) -> list[str]:

    out = ["## TPC-C consistency", ""]
    for t in tables:
        out += [f"### {t.engine}", ""]
        out += md_table(["condition", "what must hold", *t.configs], [texts for texts, _ in _rows(t)], {0})
        out.append("")
    return out + [NOTE, ""]
