"""The defaults of a run whose cache misses are read from the disk (``--memory-ratio`` below 1, pages from the disk).

There the query schedule's blocks are too unsteady for a tight interval in the time a user gives a run: the twins'
reads, seconds apart, meet a virtual disk whose latency wanders over minutes. What reached ±1% in 20 to 25 minutes
(docs/precision.md, "The turns schedule" and "The time at a common wait per page read") is the twins taking turns
(``--schedule turns``), pinned with the servers on the CPU the disk's interrupts go to (``--pin``), no warm-up block
(every block restarts the servers), and ``--precision`` watching the time at a common wait per page read. So a run in
that regime gets them where the user has not chosen otherwise, and where they can serve it: taking turns needs root,
a cgroup freezer, two configs of a server tdebench runs and a workload whose steps can be held (it says so), and it
was measured with encryption in the server (a filesystem twin keeps the query schedule). Elsewhere the query
schedule stays, and the run says why. What was applied goes to the plan (``disk_defaults``, ``schedule_note``; the
manifest records both) and the run's second line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from tdebench.api.plan import RunPlan
from tdebench.errors import EnvironmentProblem, UsageError

#: why a default was chosen, as the manifest and the run's message say it
REASON = "the default with pages read from the disk (docs/precision.md)"


@dataclass(frozen=True)
class Given:
    """Which of the regime's options the user set (command line or experiment file)."""

    schedule: bool
    pin: bool
    warmup: bool
    precision_metric: bool


def reads_only_from_disk(plan: RunPlan) -> bool:
    """Every block's cache is smaller than the data and every config's misses come from the disk."""
    from tdebench.runner.common_wait import page_sources, reads_from_disk  # noqa: PLC0415 - it asks the engines

    return (bool(plan.memory_ratios) and all(map(reads_from_disk, plan.memory_ratios))
            and set(page_sources(plan).values()) == {"disk"})


def _refusal(plan: RunPlan) -> str:
    """Why the plan fails the check of its schedule made before any work; "" if none."""
    from tdebench.runner.duet import check_plan  # noqa: PLC0415 - cgroups and engines load on demand

    try:
        check_plan(plan)
    except (UsageError, EnvironmentProblem) as refused:
        return refused.problem
    return ""


def with_disk_defaults(plan: RunPlan, given: Given) -> RunPlan:
    """``plan`` with the regime's defaults for what the user left unset, where they apply; else ``plan`` itself."""
    if plan.cache != "warm" or plan.fault or not reads_only_from_disk(plan):
        return plan
    if not all(c.spec.in_server for c in plan.configs):  # measured with encryption in the server only: a filesystem
        return plan  # twin's daemon decrypts while its server waits, which neither figure here was shown to serve
    if not given.schedule:
        turns = replace(plan, schedule="turns")
        refused = _refusal(turns)
        if refused:  # the run says why: a user may be able to give what taking turns needs (root, two configs)
            return replace(plan, schedule_note=f"the {plan.schedule} schedule: taking turns, {REASON}, cannot serve "
                                               f"this run ({refused})")
        plan = replace(turns, disk_defaults=("schedule",))
    if plan.schedule != "turns":
        return plan
    changes: dict[str, object] = {}
    if not given.pin and len(os.sched_getaffinity(0)) > 1:
        changes.update(pin=True, pin_reason=REASON)
    if not given.warmup:
        changes["warmup_trials"] = 0  # every block restarts the servers: a warm-up block adds nothing measured
    # what check_common_wait asks (misses from the disk, encryption in the server) was checked above
    if not given.precision_metric and plan.precision is not None:
        changes["precision_metric"] = "common-wait"
    return replace(plan, **changes, disk_defaults=(*plan.disk_defaults, *_named(changes)))


def _named(changes: dict[str, object]) -> tuple[str, ...]:
    """The options behind ``changes`` (RunPlan fields), in the order the run's message names them."""
    fields = {"pin": "pin", "warmup_trials": "warmup", "precision_metric": "precision_metric"}
    return tuple(fields[k] for k in fields if k in changes)


_SAID = {"schedule": "taking turns (--schedule turns)",
         "pin": "the servers on the CPU of the disk's interrupts (--pin)", "warmup": "no warm-up block (--warmup 0)",
         "precision_metric": "--precision watching the time at a common wait per page read (--precision-metric "
                             "common-wait)"}


def said(plan: RunPlan) -> str:
    """The run's line on the regime's defaults it was given, or on why it could not take turns ("" for neither)."""
    if plan.schedule_note:
        return f"pages are read from the disk: {plan.schedule_note}"
    if not plan.disk_defaults:
        return ""
    return ("pages are read from the disk: " + ", ".join(_SAID[name] for name in plan.disk_defaults)
            + f" ({REASON}; each can be given otherwise)")
