"""Rows of a trial flagged by ``--fault`` (status ``fault``): counted per series, in no sample; the summary lines."""

from __future__ import annotations

from tdebench.cli.summary import fault_lines
from tdebench.stats.load import SeriesKey, parse_rows


def _row(block: int, config: str, value: float, status: str) -> dict[str, str]:
    return {"run_id": "r", "block": str(block), "trial": str(block), "config": config, "engine": "galera",
            "encryption": "none", "workload": "tpcc", "test": "tpcc", "stream": "", "step": "vu2", "metric": "tpm",
            "value": str(value), "unit": "tpm", "started_at": "", "status": status, "round": ""}


def test_flagged_rows_are_counted_and_left_out_of_the_samples():
    m = parse_rows([_row(1, "galera-none", 5000.0, "fault"), _row(2, "galera-none", 17000.0, "ok"),
                    _row(3, "galera-none", 17100.0, "ok")])
    key = SeriesKey("galera", "galera-none", "tpcc", "tpcc", "vu2", "tpm")
    assert m.faulted[key] == 1 and m.failed[key] == 0 and m.skipped_rows == 0
    assert list(m.series[key].values) == [17000.0, 17100.0] and list(m.series[key].blocks) == [2, 3]


def test_the_summary_says_what_happened_to_each_faulted_trial():
    manifest = {"faults": [
        {"config": "galera-none", "block": 1, "fault": "kill-node@50%,block=1,rejoin=ist", "node": "node3",
         "injected": True, "transfer": "IST", "seconds_to_synced": 12.5, "flagged": True},
        {"config": "galera-tde-aes-256-ctr", "block": 1, "fault": "kill-node@50%,block=1,rejoin=ist",
         "node": "node3", "injected": False, "note": "not injected: the trial ended before 30.0 s", "flagged": False}]}
    first, second = fault_lines(manifest)
    assert "node3 rejoined by IST in 12.5 s" in first and "flagged, left out of n" in first
    assert "not injected" in second and "not flagged" in second
    assert fault_lines({}) == []


# the runner's own logic, with a stand-in for a cluster (no database: what the runner does around a trial) ------
import time
from types import SimpleNamespace

import pytest

from tdebench.api.cluster import Cluster
from tdebench.api.engine import Config
from tdebench.api.plan import Block, RunPlan
from tdebench.api.trial import Recorder, TrialResult
from tdebench.encryption import PLAIN
from tdebench.runner.faults import FaultRunner


class StandIn(Cluster):
    """Counts commits by the clock; kill and rejoin only note what was asked."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[str] = []
        self.fail = fail

    def size(self) -> int:
        return 3

    def committed_count(self) -> int:
        return int(time.monotonic() * 1000)

    def kill_node(self, number: int) -> None:
        self.calls.append(f"kill {number}")

    def rejoin_node(self, number: int, full_transfer: bool = False) -> dict:
        self.calls.append(f"rejoin {number} {'sst' if full_transfer else 'ist'}")
        time.sleep(0.3)  # longer than the rest of the trial: the trial must wait for it
        if self.fail:
            raise RuntimeError("node 3 did not reach Synced")
        return {"node": f"node{number}", "transfer": "SST" if full_transfer else "IST", "seconds_to_synced": 0.3}


def _run(fault: str, trial_seconds: float, fail: bool = False):
    config = Config("galera", PLAIN, {"nodes": "3"})
    plan = RunPlan([config], trials=2, warmup_trials=0, fault=fault)
    manifest: dict = {}
    runner = FaultRunner(plan, manifest, lambda text: None)
    runner.check(10.0)
    instance = StandIn(fail)
    state = SimpleNamespace(instance=SimpleNamespace(cluster=lambda: instance), config=config, label="galera-none")
    rec = Recorder("r", 1, "galera-none", "galera", "none", workload="tpcc")

    def trial() -> TrialResult:
        rec.add("tpcc", "vu2", "tpm", 123.0, "tpm")
        time.sleep(trial_seconds)
        return TrialResult()

    started = time.monotonic()
    result = runner.trial(state, Block(1, ("galera-none",)), rec, trial, ("tpcc", "vu2", "tpm"))
    return result, rec, manifest, instance, time.monotonic() - started


def test_the_node_is_killed_in_time_rejoined_before_the_trial_ends_and_the_trial_flagged():
    result, rec, manifest, instance, took = _run("kill-node@1%,rejoin=sst", 0.2)
    assert instance.calls == ["kill 3", "rejoin 3 sst"] and took >= 0.3 and not result.failures
    assert {r.status for r in rec.rows} == {"fault"} and rec.status == "fault"
    assert {r.metric for r in rec.rows if r.test == "fault"} >= {"at", "seconds_to_synced", "commits_per_s_before"}
    [entry] = manifest["faults"]
    assert entry["flagged"] and entry["transfer"] == "SST" and entry["headline"]["value"] == 123.0


def test_a_rejoin_that_fails_fails_the_trial():
    result, rec, manifest, _, _ = _run("kill-node@1%", 0.2, fail=True)
    assert result.failures and "did not reach Synced" in result.failures[0]
    assert "did not reach Synced" in manifest["faults"][0]["error"]


def test_a_trial_shorter_than_the_fault_is_not_flagged():
    result, rec, manifest, instance, _ = _run("kill-node@5s", 0.05)
    assert instance.calls == [] and not result.failures and {r.status for r in rec.rows} == {"ok"}
    assert manifest["faults"][0]["flagged"] is False and "not injected" in manifest["faults"][0]["note"]


def test_other_blocks_are_untouched():
    config = Config("galera", PLAIN, {"nodes": "3"})
    runner = FaultRunner(RunPlan([config], trials=2, fault="kill-node@1%,block=2"), {}, lambda text: None)
    runner.check(10.0)
    assert runner.trial(SimpleNamespace(), Block(1, ("galera-none",)), None, TrialResult, None).failures == []
