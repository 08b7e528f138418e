"""Per-step tables: one per engine and step group the workload declares (Presentation.step_groups), a row per
step (``select_100000``, ``insert_100000``, ``vu4``, …), per config the median with its 95% bootstrap CI of each
shown metric (elapsed, server CPU, MB/s, …) and, for encrypted configs, the overhead vs the plain twin with its CI.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tdebench.report.mdkit import md_table
from tdebench.report.counters_view import CounterIndex
from tdebench.report.fmt import DASH, fmt_ci, fmt_difference, fmt_pct, fmt_value, fmt_value_ci
from tdebench.report.htmlkit import Col, Safe, esc, join, table, tag
from tdebench.report.model import RunSummary
from tdebench.report.texts import RATIO_METHOD
from tdebench.stats.describe import Summary
from tdebench.stats.load import SeriesKey, is_plain
from tdebench.stats.overhead import Overhead

#: the titles of the metrics every workload may record; a workload names its own (Presentation.metrics)
METRIC_TITLES = {"elapsed": "elapsed", "server_cpu": "server CPU", "mb_per_s": "MB/s", "rows_per_s": "rows/s",
                 "bytes": "size", "latency_p50": "p50 latency", "latency_p95": "p95 latency",
                 "latency_p99": "p99 latency"}


@dataclass
class StepTable:
    """Medians and overheads of one engine's steps of one test."""

    engine: str
    test: str
    title: str
    configs: list[str]
    plain: set[str]
    metrics: list[str]
    steps: list[str]
    summaries: dict[tuple[str, str, str], Summary] = field(default_factory=dict)  # (step, config, metric)
    overheads: dict[tuple[str, str, str], Overhead] = field(default_factory=dict)
    counters: dict[tuple[str, str], str] = field(default_factory=dict)  # (step, config) -> hit ratio, bytes
    titles: dict[str, str] = field(default_factory=dict)  # metric -> title

    def metric_title(self, metric: str) -> str:
        return self.titles.get(metric, metric)


def _step_order(keys: list[SeriesKey]) -> list[str]:
    """Steps in first-seen order, ``total`` last."""
    steps = list(dict.fromkeys(k.step for k in keys))
    return [s for s in steps if s != "total"] + (["total"] if "total" in steps else [])


def step_tables(rs: RunSummary) -> list[StepTable]:
    """Every (engine, step group of the workload) that has data."""
    a = rs.analysis
    counted = CounterIndex(a.measurements)
    titles = {**METRIC_TITLES, **rs.presentation.metrics}
    out = []
    for es in rs.engines:
        for group in rs.presentation.step_groups:
            test, title, wanted = group.test, group.title, group.metrics
            keys = [k for k in a.summaries if k.engine == es.engine and k.test == test and k.config in es.configs]
            if not keys:
                continue
            metrics = [m for m in wanted if any(k.metric == m for k in keys)]
            plain = {c for c in es.configs if is_plain(a.measurements.encryption.get(c, ""))}
            t = StepTable(es.engine, test, title, list(es.configs), plain, metrics, _step_order(keys), titles=titles)
            for k in keys:
                if k.metric in metrics:
                    t.summaries[(k.step, k.config, k.metric)] = a.summaries[k]
                    o = a.overhead(k)
                    if o is not None:
                        t.overheads[(k.step, k.config, k.metric)] = o
            t.counters = {(step, c): counted.brief(c, step) for step in t.steps for c in t.configs
                          if counted.brief(c, step)}
            out.append(t)
    return out


def steps_with(t: StepTable, metric: str) -> list[str]:
    """The steps that have a value of ``metric`` for some config."""
    return [s for s in t.steps if any((s, c, metric) in t.summaries for c in t.configs)]


def _median(s: Summary | None) -> tuple[str, str]:
    if s is None or s.median is None:
        return DASH, ""
    return fmt_value(s.median, s.unit), fmt_value_ci(s.median_ci_low, s.median_ci_high, s.unit)


def _overhead(o: Overhead | None) -> tuple[str, str]:
    return (fmt_pct(o.overhead_pct), fmt_ci(o.ci_low_pct, o.ci_high_pct)) if o else (DASH, "")


def _added(o: Overhead | None) -> str:
    """What the config adds to a time, paired (``adds +6.13 ms [+5.90, +6.36]``); "" for other metrics."""
    if o is None or o.difference is None or o.unit != "s":
        return ""
    return "adds " + fmt_difference(o.difference, o.difference_low, o.difference_high, o.unit)


def _cells(t: StepTable, step: str, config: str, metric: str) -> list[tuple[str, str]]:
    cells = [_median(t.summaries.get((step, config, metric)))]
    if config not in t.plain:
        o = t.overheads.get((step, config, metric))
        main, sub = _overhead(o)
        counted = t.counters.get((step, config), "")
        cells.append((main, " · ".join(x for x in (sub, _added(o), counted) if x and x != DASH) or sub))
    return cells


def html_table(t: StepTable, metric: str) -> Safe:
    """One metric: median (95% CI) per config and overhead (95% CI) per encrypted config."""
    cols = [Col("step")]
    for c in t.configs:
        cols.append(Col(c, True))
        if c not in t.plain:
            cols.append(Col("overhead", True))
    rows = []
    for step in steps_with(t, metric):
        row: list[object] = [step]
        for c in t.configs:
            for main, sub in _cells(t, step, c, metric):
                row.append(join([esc(main), tag("span", sub, class_="sub")]) if sub and sub != DASH else main)
        rows.append(row)
    return table(cols, rows)


def html_section(tables: list[StepTable]) -> Safe:
    """All step tables, one sub-table per metric."""
    parts: list[object] = [tag("h2", "Per operation")]
    for t in tables:
        for metric in t.metrics:
            parts += [tag("h3", f"{t.engine}: {t.title}, {t.metric_title(metric)}"), html_table(t, metric)]
    parts.append(tag("p", "Median over trials (over rounds with the interleaved OLTP schedule) with its 95% bootstrap interval (small grey text); overhead = "
                          f"config vs plain twin with its 95% interval ({RATIO_METHOD}), then the time it adds "
                          "(the mean paired difference with its 95% t interval, for times paired by block), then "
                          "the engine's counters "
                          "over the step where it counts them (cache hit ratio, bytes decrypted). For MB/s, "
                          "a negative overhead means lower throughput. MB/s = bytes processed (the rows' value "
                          "sizes as the DBMS reports them) / elapsed / 1024².", class_="note"))
    return tag("section", join(parts), id="operations")


def md_lines(tables: list[StepTable]) -> list[str]:
    """The same tables in Markdown."""

    out: list[str] = []
    for t in tables:
        for metric in t.metrics:
            headers, right = ["step"], set()
            for c in t.configs:
                right.add(len(headers))
                headers.append(f"{c} (median, 95% CI)")
                if c not in t.plain:
                    right.add(len(headers))
                    headers.append("overhead (95% CI)")
            rows = []
            for step in steps_with(t, metric):
                row = [step]
                for c in t.configs:
                    row += [f"{main} ({sub})" if sub and sub != DASH else main
                            for main, sub in _cells(t, step, c, metric)]
                rows.append(row)
            out += [f"## {t.engine}: {t.title}, {t.metric_title(metric)}", ""]
            out += md_table(headers, rows, right) + [""]
    return out
