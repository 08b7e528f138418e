"""Parse sysbench 1.0 output: per-second lines, the final report and the latency histogram.

The run is started with ``--report-checkpoints=<rampup>``: the checkpoint report covers the ramp-up and
resets the counters, so the final report (the last "SQL statistics" block) and the histogram printed with
it cover the measured window only. Its rates ("per sec.") are over that window.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_INTERVAL = re.compile(
    r"\[\s*(\d+)s\s*\]\s+thds:\s*(\d+)\s+tps:\s*([\d.]+)\s+qps:\s*([\d.]+)\s+\(r/w/o:\s*([\d.]+)/([\d.]+)/([\d.]+)\)"
    r"\s+lat\s+\(ms,(\d+)%\):\s*([\d.]+)\s+err/s:\s*([\d.]+)\s+reconn/s:\s*([\d.]+)")
_COUNT = r"^\s*{name}:\s+(\d+)\s+\(([\d.]+) per sec\.\)"
_VALUE = r"^\s*{name}:\s+([\d.]+)"
_HIST_ROW = re.compile(r"^\s*([\d.]+)\s+\|\**\s+(\d+)\s*$")


@dataclass
class Interval:
    """One ``--report-interval=1`` line."""

    second: int
    threads: int
    tps: float
    qps: float
    reads: float
    writes: float
    other: float
    latency_pct: int
    latency_ms: float
    errors: float
    reconnects: float


@dataclass
class Report:
    """The measured window: counts, rates, latency (seconds) and the per-second series."""

    transactions: int = 0
    tps: float = 0.0
    queries: int = 0
    qps: float = 0.0
    reads: int = 0
    writes: int = 0
    other: int = 0
    errors: int = 0
    reconnects: int = 0
    latency: dict[str, float] = field(default_factory=dict)  # min, avg, max, p50, p95, p99 in seconds
    histogram: list[tuple[float, int]] = field(default_factory=list)  # (ms, count)
    intervals: list[Interval] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.transactions > 0 or self.queries > 0


def parse_interval(line: str) -> Interval | None:
    """A per-second line (it may share its line with other output), else None."""
    m = _INTERVAL.search(line)
    if not m:
        return None
    g = m.groups()
    return Interval(int(g[0]), int(g[1]), float(g[2]), float(g[3]), float(g[4]), float(g[5]), float(g[6]),
                    int(g[7]), float(g[8]), float(g[9]), float(g[10]))


def _find(pattern: str, text: str) -> re.Match[str] | None:
    return re.search(pattern, text, re.M)


def histogram_percentile(rows: list[tuple[float, int]], pct: float) -> float | None:
    """Nearest-rank percentile (ms) of a sysbench histogram."""
    total = sum(n for _, n in rows)
    if not total:
        return None
    rank = max(1, math.ceil(pct / 100 * total))
    seen = 0
    for value, n in sorted(rows):
        seen += n
        if seen >= rank:
            return value
    return rows[-1][0]


def _histogram(text: str) -> list[tuple[float, int]]:
    start = text.rfind("Latency histogram")
    if start < 0:
        return []
    rows = []
    for line in text[start:].splitlines()[2:]:
        m = _HIST_ROW.match(line)
        if m:
            rows.append((float(m.group(1)), int(m.group(2))))
        elif line.strip() and not line.strip().startswith("["):
            break
    return rows


def parse_report(text: str) -> Report:
    """The final report of a sysbench run (after the last checkpoint)."""
    report = Report(intervals=[i for i in map(parse_interval, text.splitlines()) if i is not None])
    final = text[text.rfind("SQL statistics:"):] if "SQL statistics:" in text else ""
    for name, count_attr, rate_attr in (("transactions", "transactions", "tps"), ("queries", "queries", "qps"),
                                        ("ignored errors", "errors", None), ("reconnects", "reconnects", None)):
        m = _find(_COUNT.format(name=name), final)
        if m:
            setattr(report, count_attr, int(m.group(1)))
            if rate_attr:
                setattr(report, rate_attr, float(m.group(2)))
    for name in ("read", "write", "other"):
        m = _find(_VALUE.format(name=name), final)
        if m:
            setattr(report, {"read": "reads", "write": "writes", "other": "other"}[name], int(float(m.group(1))))
    for name, key in (("min", "min"), ("avg", "avg"), ("max", "max")):
        m = _find(_VALUE.format(name=name), final)
        if m:
            report.latency[key] = float(m.group(1)) / 1000
    report.histogram = _histogram(text)
    for pct in (50, 95, 99):
        value = histogram_percentile(report.histogram, pct)
        if value is not None:
            # a histogram bucket's value can lie past the exact extremes sysbench also prints (a p99 of 1.0136 ms
            # beside a max of 1.0115 ms): a percentile is held within them
            low, high = report.latency.get("min", 0.0), report.latency.get("max", math.inf)
            report.latency[f"p{pct}"] = min(max(value / 1000, low), high)
    return report
