"""The schedule a run gets without --schedule: the duet for a memory-bound run from the disk where it can serve it,
query elsewhere, the reason recorded either way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tdebench.api.plan import plan_from_json
from tdebench.cli.run import experiment_from_options, plan_from_experiment
from tdebench.runner import cgroups


@pytest.fixture
def duet_machine(monkeypatch):
    """Two CPUs and cgroup v1 with the duet's controllers, whatever this machine has."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(cgroups, "unavailable", lambda: "")
    monkeypatch.setattr(cgroups, "locate", lambda: cgroups.Hierarchies("1", {"cpuset": Path("/nonexistent")}))


def _plan(engines: str = "mariadb", encryption: str = "none,tde:aes-256-ctr", **run: object):
    return plan_from_experiment(experiment_from_options(engines, encryption, {}, dict(run)))


def test_a_memory_bound_run_from_the_disk_gets_the_duet_and_says_why(duet_machine):
    plan = _plan(memory_ratio=[0.25])
    assert plan.schedule == "duet" and "pages read from the disk" in plan.schedule_reason
    again = plan_from_json(plan.to_json())  # a resumed run keeps both
    assert (again.schedule, again.schedule_reason) == (plan.schedule, plan.schedule_reason)


@pytest.mark.parametrize("run", [{}, {"memory_ratio": [0.25], "page_source": "memory"}])
def test_cached_runs_and_misses_from_memory_keep_the_query_schedule(duet_machine, run):
    plan = _plan(**run)
    assert (plan.schedule, plan.schedule_reason) == ("query", "")


def test_a_schedule_asked_for_stays(duet_machine):
    assert _plan(memory_ratio=[0.25], schedule="query").schedule == "query"
    assert _plan(memory_ratio=[0.25], schedule="block").schedule == "block"


@pytest.mark.parametrize(("args", "says"), [
    ({"encryption": "none,tde:aes-256-ctr,tde:aes-128-ctr"}, "exactly two configs"),
    ({"workload": "sysbench"}, "half the CPUs"),
])
def test_where_the_duet_cannot_serve_the_run_it_keeps_query_and_says_why(duet_machine, args, says):
    plan = _plan(memory_ratio=[0.25], **args)
    assert plan.schedule == "query" and plan.schedule_reason.startswith("the duet, the default for a memory-bound")
    assert says in plan.schedule_reason


def test_cgroup_v2_keeps_query(duet_machine, monkeypatch):
    monkeypatch.setattr(cgroups, "locate", lambda: cgroups.Hierarchies("2", {"cpuset": Path("/nonexistent")}))
    plan = _plan(memory_ratio=[0.25])
    assert plan.schedule == "query" and "cgroup v2" in plan.schedule_reason


def test_one_cpu_keeps_query(duet_machine, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    plan = _plan(memory_ratio=[0.25])
    assert plan.schedule == "query" and "at least 2 CPUs" not in plan.schedule_reason  # the problem, not its fix
    assert "1 CPU" in plan.schedule_reason
