"""A run whose misses are read from the disk takes that regime's defaults (taking turns, pinned, no warm-up,
watching the time at a common wait per read) for what the user left unset, where they can serve it."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tdebench.api.plan import plan_from_json
from tdebench.cli import disk_defaults
from tdebench.cli.run import experiment_from_options, plan_from_experiment
from tdebench.runner import duet
from tdebench.runner.freezer import freezer_base

TURNS_HERE = os.geteuid() == 0 and not duet.cgroups.unavailable() and freezer_base() is not None
CPUS = len(os.sched_getaffinity(0))
needs_turns = pytest.mark.skipif(not TURNS_HERE, reason="taking turns needs root, cgroups and a freezer")


def plan(encryption: str = "none,tde:aes-256-ctr", **run: Any):
    """The plan `tdebench run --engine mariadb --encryption ENCRYPTION` with ``run``'s options would run."""
    options = {"memory_ratio": "0.25", "precision": "1%", **run}
    return plan_from_experiment(experiment_from_options("mariadb", encryption, {}, options))


@needs_turns
def test_pages_from_the_disk_take_turns_pinned_without_warm_up_watching_the_common_wait():
    p = plan()
    assert (p.schedule, p.warmup_trials, p.precision_metric) == ("turns", 0, "common-wait")
    assert p.pin is (CPUS > 1)
    assert p.disk_defaults == ("schedule", *(("pin",) if CPUS > 1 else ()), "warmup", "precision_metric")
    said = disk_defaults.said(p)
    for flag in ("--schedule turns", "--warmup 0", "--precision-metric common-wait", "docs/precision.md"):
        assert flag in said
    assert ("--pin" in said) is (CPUS > 1)
    again = plan_from_json(p.to_json())  # a resumed run keeps them, and says so alike
    assert (again.schedule, again.pin, again.warmup_trials, again.precision_metric, again.disk_defaults) == (
        p.schedule, p.pin, p.warmup_trials, p.precision_metric, p.disk_defaults)


@needs_turns
def test_what_the_user_gave_stays():
    p = plan(pin=False, warmup=1, precision_metric="headline")
    assert (p.schedule, p.pin, p.warmup_trials, p.precision_metric, p.disk_defaults) == (
        "turns", False, 1, "headline", ("schedule",))
    assert "--pin" not in disk_defaults.said(p) and "--warmup" not in disk_defaults.said(p)
    given = plan(schedule="turns")  # the schedule asked for: the rest of the regime's defaults still apply
    assert given.schedule == "turns" and "schedule" not in given.disk_defaults and "warmup" in given.disk_defaults
    assert "--schedule turns" not in disk_defaults.said(given)


@needs_turns
def test_without_precision_nothing_is_watched():
    p = plan(precision=None)
    assert (p.schedule, p.precision_metric) == ("turns", "headline") and "precision_metric" not in p.disk_defaults


@pytest.mark.parametrize("run", [{"schedule": "query"}, {"memory_ratio": None}, {"memory_ratio": "0.25,1"},
                                 {"page_source": "memory"}, {"cache": "cold"}])
def test_other_regimes_and_choices_keep_the_old_defaults(run: dict[str, Any]):
    p = plan(**run)
    assert p.schedule != "turns" and p.disk_defaults == () and p.schedule_note == "" and p.warmup_trials == 1
    assert p.precision_metric == "headline" and disk_defaults.said(p) == ""


def test_a_filesystem_twin_keeps_the_query_schedule():
    p = plan("none,fs:gocryptfs")  # its FUSE daemon decrypts during the wait E* would pool: not what was measured
    assert (p.schedule, p.precision_metric, p.disk_defaults, p.schedule_note) == ("query", "headline", (), "")


def test_where_turns_cannot_run_the_query_schedule_stays_and_the_run_says_why(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(duet.cgroups, "unavailable", lambda: "no cgroup v2 here")
    p = plan()
    assert (p.schedule, p.pin, p.warmup_trials, p.precision_metric, p.disk_defaults) == (
        "query", False, 1, "headline", ())
    said = disk_defaults.said(p)
    assert said.startswith("pages are read from the disk: the query schedule: taking turns, the default with pages")
    assert "needs a cgroup per twin" in said and "no cgroup v2 here" in said
    assert plan_from_json(p.to_json()).schedule_note == p.schedule_note
    three = plan("none,none,tde:aes-256-ctr")
    assert three.schedule == "query" and "runs exactly two configs side by side, not 3" in disk_defaults.said(three)
    streams = plan(tests=["power", "throughput"])
    assert streams.schedule == "query" and "throughput test runs in threads" in disk_defaults.said(streams)
