"""How a ``--precision`` run of ``--workload sql`` shares each block's time among the statements.

The rule stops when every watched headline is narrow enough, so the noisiest statement decides how many blocks a
run needs; an equal share of every block for every statement spends most of the run on statements that are
already precise. After the rule's pilot (``--trials`` blocks) each statement's visits per block are set once, in
proportion to how much its visits vary (the within-block sd of the log ratio of a visit to the plain twin's visit
of the same round, the largest over the compared configs), keeping the block's measured time: the Neyman
allocation, which makes every statement's block mean about equally precise (v_i ∝ s_i², scaled so that
Σ v_i·c_i stays what it was, c_i a visit's seconds). Every statement keeps at least one visit per block, and none
gets more than :data:`MAX_FACTOR` times the rounds it had. The allocation depends on the noise only, never on the
estimates, so each block's mean stays unbiased; the manifest's ``schedule`` records it (``allocation``).
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from tdebench.api.plan import RunPlan
from tdebench.workloads.sql.stepped import Visits

MAX_FACTOR = 8  # at most this many times the rounds of a block before the allocation


def plain_twins(plan: RunPlan) -> dict[str, str]:
    """Compared config -> its plain twin (the first plain config of its engine)."""
    first: dict[str, str] = {}
    for c in plan.configs:
        if c.spec.is_plain:
            first.setdefault(c.engine, c.label)
    return {c.label: first[c.engine] for c in plan.configs if c.engine in first and c.label != first[c.engine]}


def visit_noise(path: Path, twins: dict[str, str]) -> dict[str, float]:
    """Statement -> the largest within-block sd (over the compared configs) of log(visit / plain twin's visit)."""
    times: dict[str, dict[str, dict[tuple[int, int], float]]] = defaultdict(lambda: defaultdict(dict))
    with open(path, newline="", encoding="utf-8") as handle:
        for r in csv.DictReader(handle):
            if r["metric"] == "visit_elapsed" and r["status"] == "ok" and r["round"] and float(r["value"]) > 0:
                times[r["step"]][r["config"]][(int(r["block"]), int(r["round"]))] = float(r["value"])
    out: dict[str, float] = {}
    for step, by in times.items():
        sds = []
        for config, plain in twins.items():
            keys = [k for k in by.get(config, {}) if k in by.get(plain, {})]
            ratios: dict[int, list[float]] = defaultdict(list)
            for block, rnd in keys:
                ratios[block].append(math.log(by[config][(block, rnd)] / by[plain][(block, rnd)]))
            within = [v - float(np.mean(vs)) for vs in ratios.values() if len(vs) > 1 for v in vs]
            if len(within) > 2:
                sds.append(float(np.std(within, ddof=1)))
        if sds:
            out[step] = max(sds)
    return out


def allocate(visits: Visits, noise: dict[str, float]) -> dict[str, int]:
    """New visits per block of every statement with a noise figure (the others keep theirs): v_i ∝ s_i², the
    block's measured time kept, at least 1, at most :data:`MAX_FACTOR` × the rounds."""
    steps = [s for s in noise if s in visits.visits and s in visits.seconds]
    budget = sum(visits.visits[s] * visits.seconds[s] for s in steps)
    weight = sum(noise[s] ** 2 * visits.seconds[s] for s in steps)
    if not steps or budget <= 0 or weight <= 0:
        return dict(visits.visits)
    out = dict(visits.visits)
    for s in steps:
        out[s] = max(1, min(MAX_FACTOR * visits.rounds, round(budget * noise[s] ** 2 / weight)))
    return out
