"""After every block of a run whose cache misses are read from the disk: each twin's time at the block's common wait
per page read (:mod:`tdebench.stats.common_wait`), recorded beside its elapsed time (the workload's
:class:`~tdebench.api.workload.WaitSplit`), so that the report, overhead.csv and ``--precision-metric common-wait``
read it as any other series. The block's common wait per read itself goes to the manifest (``WAITS_KEY``, seconds by
memory ratio and block): the regime those figures belong to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tdebench.api.measurement import Measurement
from tdebench.api.plan import Block, RunPlan
from tdebench.api.trial import Recorder
from tdebench.api.workload import WaitSplit
from tdebench.stats.common_wait import WAITS_KEY, at_common_wait, common_wait


def page_sources(plan: RunPlan) -> dict[str, str]:
    """config -> where its cache misses come from (``--page-source``, else its engine's default)."""
    from tdebench.engines import get_engine  # noqa: PLC0415 - the engines' registry loads on demand

    return {c.label: plan.page_source or next(iter(get_engine(c.engine).page_sources), "") for c in plan.configs}


def reads_from_disk(ratio: float | None) -> bool:
    """True for a block whose cache is smaller than the data (its misses are the reads E* is about)."""
    return ratio is not None and ratio < 1


class CommonWait:
    """Collects each twin's three figures as its trial closes, and records the derived value once the block is
    done. Inactive (records nothing) unless the workload splits its time, the run is memory-bound with every miss
    read from the disk, and at least two configs' encryption runs in their server."""

    def __init__(self, plan: RunPlan, split: WaitSplit | None, manifest: dict[str, Any] | None = None) -> None:
        self.split = split
        self.manifest = manifest if manifest is not None else {}
        self.labels = {c.label for c in plan.configs if c.spec.in_server}
        self.active = (split is not None and any(map(reads_from_disk, plan.memory_ratios)) and len(self.labels) >= 2
                       and set(page_sources(plan).values()) == {"disk"})
        self._figures: dict[str, dict[tuple[str, str, str], float]] = {}
        self._elapsed: dict[str, Measurement] = {}

    def collect(self, label: str, rows: list[Measurement]) -> None:
        """Keep the figures of ``label``'s trial that ended well (its rows as recorded)."""
        if not self.active or self.split is None or label not in self.labels:
            return
        wanted = (self.split.elapsed, self.split.cpu, self.split.reads)
        found = {(r.test, r.step, r.metric): r for r in rows if r.status == "ok"
                 and (r.test, r.step, r.metric) in wanted}
        if len(found) == len(wanted):
            self._figures[label] = {k: r.value for k, r in found.items()}
            self._elapsed[label] = found[self.split.elapsed]

    def finish(self, block: Block, recorder: Callable[[str, Block], Recorder]) -> list[Measurement]:
        """The block's derived rows (none for a warm-up block, a block whose cache holds all the data, or with fewer
        than two twins' figures); forgets the block's figures."""
        figures, self._figures, elapsed, self._elapsed = self._figures, {}, self._elapsed, {}
        if block.warmup or not reads_from_disk(block.memory_ratio) or len(figures) < 2 or self.split is None:
            return []
        labels = sorted(figures)
        e, c, p = (np.array([figures[label][key] for label in labels])
                   for key in (self.split.elapsed, self.split.cpu, self.split.reads))
        wait = float(common_wait(e, c, p))
        if np.isfinite(wait):
            waits = self.manifest.setdefault(WAITS_KEY, {}).setdefault(f"{block.memory_ratio:g}", {})
            waits[str(block.number)] = wait
        out = []
        for label, value in zip(labels, at_common_wait(e, c, p)):
            if np.isfinite(value) and value > 0:
                rec = recorder(label, block)
                test, step, metric = self.split.derived
                rec.add(test, step, metric, float(value), elapsed[label].unit, stream=elapsed[label].stream)
                out += rec.rows
        return out
