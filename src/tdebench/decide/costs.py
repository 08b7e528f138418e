"""What each mechanism costs on the user's workload: rows of the cost run's ``report/overhead.csv``, per regime.

* **headlines**: the figures the workload declares first (the manifest's ``headlines``, e.g. the weighted totals
  of the reads and of the writes), else its one headline (``headline``), else the run's total;
* **tail latency**: every latency percentile the run recorded for the headlines' test (``p95``, ``latency_p99``,
  ...); none when the workload times each statement once per trial;
* **statements**: every step of the workload (its manifest's ``data.steps``: name, kind query/write, weight).

A regime is the memory ratio the cost run's labels carry (``@mem0.25``), or none: the engine's cache as
configured."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tdebench.api.presentation import Headline
from tdebench.api.regime import split_label
from tdebench.decide.sources import SubRunFiles
from tdebench.report.model import pick_headline
from tdebench.stats.load import SeriesKey
from tdebench.stats.overhead import Overhead

_TAIL = re.compile(r"^(?:latency_)?p(9\d(?:\.\d+)?)$")


@dataclass(frozen=True)
class Figure:
    """One cost series: (test, step, metric), how the page names it, and its kind (headline, tail, statement)."""

    test: str
    step: str
    metric: str
    title: str
    kind: str  # headline, tail, query, write
    weight: float | None = None

    @property
    def series(self) -> tuple[str, str, str]:
        return (self.test, self.step, self.metric)


def declared_headlines(manifest: dict[str, Any]) -> list[Headline]:
    """The workload's headlines as the run recorded them: ``headlines`` (a list of :class:`Headline` JSON, at the
    manifest's top level, in its plan, or in either's ``presentation``), else the one ``headline`` ({test, step,
    metric})."""
    plan = manifest.get("plan") if isinstance(manifest.get("plan"), dict) else {}
    for holder in (manifest, manifest.get("presentation"), plan, plan.get("presentation")):
        items = holder.get("headlines") if isinstance(holder, dict) else None
        if isinstance(items, list) and items:
            return [Headline.from_json(i) for i in items if isinstance(i, dict)]
    one = manifest.get("headline")
    if isinstance(one, dict) and one.get("test"):
        return [Headline("headline", str(one["test"]), str(one["step"]), str(one["metric"]),
                         title=f"{one['test']} {one['step']}")]
    return []


def figures(run: SubRunFiles) -> list[Figure]:
    """The figures of the cost run, in the order the page shows them."""
    declared = declared_headlines(run.manifest)
    keys = [o.key for o in run.overheads]
    if declared:
        heads = [Figure(h.test, h.step, h.metric, h.title, "headline") for h in declared]
    else:
        key = pick_headline(keys)
        heads = [] if key is None else [Figure(key.test, key.step, key.metric, _total_title(key), "headline")]
    tests = {h.test for h in heads}
    tails = sorted({(k.test, k.step, k.metric) for k in keys if k.test in tests and _TAIL.match(k.metric)})
    tail = [Figure(t, s, m, f"{s} {m.replace('latency_', '')}", "tail") for t, s, m in tails]
    steps = (run.manifest.get("data") or {}).get("steps") or []
    test = heads[0].test if heads else ""
    statements = [Figure(test, str(s.get("name")), "elapsed", str(s.get("name")),
                         "write" if s.get("kind") == "write" else "query", _weight(s.get("weight")))
                  for s in steps if isinstance(s, dict)]
    shown = {f.series for f in heads}
    return heads + tail + [f for f in statements if f.series not in shown]


def _total_title(key: SeriesKey) -> str:
    return "every statement, weighted (total)" if key.step == "total" else f"{key.test} {key.step}"


def _weight(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def regimes(run: SubRunFiles) -> list[float | None]:
    """The regimes of the cost run in its order: None (the cache as configured), or its memory ratios."""
    ratios = (run.manifest.get("plan") or {}).get("memory_ratios") or []
    found = {split_label(o.config)[1] for o in run.overheads}
    ordered = [float(r) for r in ratios if float(r) in found]
    return ordered + [r for r in sorted(found, key=lambda x: (x is not None, x or 0)) if r not in ordered]


def regime_title(ratio: float | None) -> str:
    """How the page names a regime."""
    if ratio is None:
        return "cache as configured"
    held = "the data fit in it" if ratio >= 1 else f"{ratio:g} of the data fit in it"
    return f"cache {ratio:g} × data ({held})"


def overhead_of(run: SubRunFiles, encryption: str, figure: Figure, ratio: float | None) -> Overhead | None:
    """The overhead.csv row of spec ``encryption`` for ``figure`` at ``ratio`` (None: not measured)."""
    for o in run.overheads:
        base, r = split_label(o.config)
        if o.encryption == encryption and r == ratio and (o.test, o.step, o.metric) == figure.series:
            return o
    return None


def plain_label(run: SubRunFiles) -> str:
    """The cost run's plain twin (its first config with encryption none)."""
    return run.config_of("none")
