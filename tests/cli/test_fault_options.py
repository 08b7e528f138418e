"""``--fault``: its grammar, and the refusals before any work (one line, exit 2): an engine that declares no such
fault, a node or block that does not exist, the interleaved schedule, a share of a trial of unknown length."""

from __future__ import annotations

import pytest

from tdebench.api.faults import Fault, parse_fault
from tdebench.api.plan import RunPlan
from tdebench.engines import Config, get_engine
from tdebench.encryption import PLAIN
from tdebench.errors import EnvironmentProblem, UsageError
from tests.cli.test_bad_input import tdebench


def test_the_grammar():
    assert parse_fault("kill-node@50%") == Fault("kill-node", share=0.5)
    assert parse_fault("Kill-Node@20s, block=2, node=3, rejoin=SST") == Fault("kill-node", seconds=20.0, block=2,
                                                                              node=3, rejoin="sst")
    assert parse_fault("kill-node@50%").at_seconds(30.0) == 15.0
    assert parse_fault("kill-node@50%").at_seconds(None) is None
    assert str(parse_fault("kill-node@7s,node=2")) == "kill-node@7s,block=1,node=2,rejoin=ist"


@pytest.mark.parametrize("text, fragment", [
    ("kill-node", "say when"), ("kill-node@0%", "between 0% and 100%"), ("kill-node@100%", "between 0% and 100%"),
    ("kill-node@5m", "say when"), ("reboot@5s", "unknown fault 'reboot'"), ("kill-node@5s,block=0", "'block=0'"),
    ("kill-node@5s,rejoin=xtrabackup", "'rejoin=xtrabackup'"), ("kill-node@5s,colour=red", "'colour=red'"),
])
def test_bad_text_is_refused(text, fragment):
    with pytest.raises(UsageError, match=fragment):
        parse_fault(text)


def test_the_plan_needs_a_measured_block_and_whole_trials():
    configs = [Config("galera", PLAIN, {"nodes": "2"})]
    assert RunPlan(configs, trials=2, fault="kill-node@5s,block=2").fault_spec.block == 2
    with pytest.raises(UsageError, match="not a measured block"):
        RunPlan(configs, trials=2, fault="kill-node@5s,block=3")
    with pytest.raises(UsageError, match="--schedule block"):
        RunPlan(configs, schedule="query", fault="kill-node@5s")
    plan = RunPlan(configs, trials=2, fault="kill-node@5s,node=2")
    assert plan.to_json()["fault"] == "kill-node@5s,node=2"


def test_the_capability_is_declared_not_named():
    assert "kill-node" in get_engine("galera").faults
    assert get_engine("mariadb").faults == () and get_engine("sqlite").faults == ()


def _one_line_exit_2(result, fragment, out):
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert not out.exists()


@pytest.mark.parametrize("args, fragment", [
    (["--engine", "mariadb"], "engine mariadb declares no such fault"),
    (["--engine", "sqlite"], "engine sqlite declares no such fault"),
    (["--engine", "galera", "--nodes", "3", "--fault", "kill-node@50%,node=4"], "has nodes 1 to 3"),
    (["--engine", "galera", "--nodes", "2"], "leaves 'galera-none' without a quorum"),
    (["--engine", "galera", "--fault", "kill-node@50%,block=4"], "not a measured block"),
    (["--engine", "galera", "--schedule", "query"], "--fault needs whole trials"),
    (["--engine", "galera", "--fault", "kill-node@soon"], "bad --fault 'kill-node@soon'"),
])
def test_refused_before_any_work(args, fragment, tmp_path):
    out = tmp_path / "out"
    fault = [] if "--fault" in args else ["--fault", "kill-node@50%"]
    result = tdebench("run", "--workload", "tpcc", *fault, *args, "--out", str(out))
    _one_line_exit_2(result, fragment, out)


def test_a_share_of_a_trial_of_unknown_length_is_refused(tmp_path):
    try:
        get_engine("galera").check_available()
    except EnvironmentProblem as exc:
        pytest.skip(exc.one_line())
    result = tdebench("run", "--engine", "galera", "--nodes", "3", "--workload", "tpch", "--fault", "kill-node@50%",
                      "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "give the time in seconds" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
