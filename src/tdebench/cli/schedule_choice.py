"""The schedule a run gets when ``--schedule`` is not given.

``query`` (the twins' steps interleaved) in general, ``block`` (whole trials) where a cold cache or a fault needs
them, and ``duet`` (the two twins' steps side by side) for a memory-bound run whose pages the caches miss come from
the disk: there, the interleaved schedule's twins read from the disk minutes apart and never reached ±1% in 20
minutes (TPC-H SF 0.1 at ``--memory-ratio 0.25``), while the duet with its CPU sets swapped inside every pair met it
within the rule's pilot (docs/precision.md, "The duet schedule"). The duet is chosen only where it can serve the run
(two configs, one client stream each rather than rounds of many clients, single servers tdebench runs on this
machine, no ``--pin``, cgroup v1 with its CPU set, CPU accounting and block I/O controllers); anywhere else the run
keeps ``query`` and the plan says why (``schedule_reason``).
"""

from __future__ import annotations

import dataclasses

from tdebench.api.plan import RunPlan
from tdebench.engines import get_engine
from tdebench.errors import EnvironmentProblem, UsageError

DUET_REASON = ("default for a memory-bound run with pages read from the disk: the twins run each step side by side "
               "(docs/precision.md, \"The duet schedule\")")


def reads_from_disk(plan: RunPlan) -> bool:
    """A memory ratio is swept and every config's cache misses are read from the disk."""
    if not plan.memory_ratios:
        return False
    for config in plan.configs:
        sources = get_engine(config.engine).page_sources
        if (plan.page_source or next(iter(sources), "")) != "disk":
            return False
    return True


def why_not_duet(plan: RunPlan) -> str | None:
    """Why the duet cannot be this plan's default (None: it can)."""
    from tdebench.runner import cgroups
    from tdebench.runner.duet import check_plan

    from tdebench.workloads import workload_class

    if workload_class(plan.workload).pairs_by_round:
        return ("its clients run in rounds across the whole machine, and the duet would give each twin half the "
                "CPUs (--schedule duet asks for it)")
    if any(get_engine(c.engine).cluster_type is not None for c in plan.configs):
        return "a cluster's nodes would share one twin's CPU set (the duet is measured for single servers)"
    try:
        check_plan(dataclasses.replace(plan, schedule="duet"))
    except (UsageError, EnvironmentProblem) as exc:
        return exc.problem
    hier = cgroups.locate()
    if hier is None or hier.version != "1":
        return ("cgroup v2 holds a process in one group only, and a twin whose page cache a memory cgroup bounds "
                "could not join its duet group")
    return None


def choose(plan: RunPlan, asked: bool) -> RunPlan:
    """``plan`` with its default schedule settled: the duet where :func:`reads_from_disk` and it can serve the run,
    the reason recorded either way; a schedule the user asked for stays as it is."""
    if asked or plan.schedule != "query" or not reads_from_disk(plan):
        return plan
    refusal = why_not_duet(plan)
    if refusal is not None:
        return dataclasses.replace(plan, schedule_reason=f"the duet, the default for a memory-bound run with pages "
                                                         f"read from the disk, cannot serve this run: {refusal}")
    return dataclasses.replace(plan, schedule="duet", schedule_reason=DUET_REASON)
