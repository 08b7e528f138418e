"""``--schedule duet`` with what it cannot serve: exit 2 (3 for the machine) with one line naming the fix, before
anything is written (the corpus' contract, tests/cli/test_bad_input_corpus.py)."""

from __future__ import annotations

import os

import pytest

from tdebench.runner import cgroups
from tests.cli.test_bad_input_corpus import assert_one_line_error, cli

RUN = ["run", "--schedule", "duet", "--sf", "0.01"]


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)


CASES = [
    ("three-configs", ["--encryption", "none,none,sqlcipher:aes-256-cbc"], 2, "exactly two configs"),
    ("one-config", ["--encryption", "none"], 2, "exactly two configs"),
    ("pin", ["--pin"], 2, "--pin puts the servers on fixed cpus"),
    ("no-steps", ["--workload", "load"], 2, "no steps two twins can run side by side"),
    ("throughput-only", ["--tests", "throughput"], 2, "throughput test runs whole"),
    ("single-process-engine", ["--engine", "duckdb", "--encryption", "none,none"], 2, "one process only"),
    ("cold", ["--cache", "cold"], 2, "--schedule duet keeps every server up and warm"),
]


@pytest.mark.parametrize("case, args, code, fragment", CASES, ids=[c[0] for c in CASES])
def test_duet_refuses_before_any_work(case, args, code, fragment, capfd, tmp_path, monkeypatch):
    monkeypatch.setattr(cgroups, "unavailable", lambda: "")  # the machine is not what these cases are about
    result, _, err = cli(capfd, *RUN, "--out", str(tmp_path / "out"), *args)
    line = assert_one_line_error(result, err, code, fragment)
    assert "duet" in line or "--cache" in line
    assert not (tmp_path / "out").exists()


def test_fewer_cpus_than_twins_is_exit_2(capfd, tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    result, _, err = cli(capfd, *RUN, "--out", str(tmp_path / "out"))
    line = assert_one_line_error(result, err, 2, "this process may run on 1 CPU")
    assert "at least 2 CPUs" in line and not (tmp_path / "out").exists()


def test_no_cgroups_is_exit_3(capfd, tmp_path, monkeypatch):
    monkeypatch.setattr(cgroups, "unavailable", lambda: "only root can create cgroups")
    result, _, err = cli(capfd, *RUN, "--out", str(tmp_path / "out"))
    line = assert_one_line_error(result, err, 3, "needs a cgroup per twin")
    assert "only root" in line and "--schedule query" in line and not (tmp_path / "out").exists()



TURNS = [
    ("turns-embedded", ["--engine", "sqlite"], 2, "an embedded engine's statements run in tdebench's own process"),
    ("turns-throughput", ["--engine", "mariadb", "--tests", "power,throughput"], 2,
     "throughput test runs in threads that keep their own time"),
    ("turns-oltp", ["--engine", "mariadb", "--workload", "tpcc"], 2, "timed by clients that keep their own time"),
    ("turns-three-configs", ["--engine", "mariadb", "--encryption", "none,none,none"], 2, "exactly two configs"),
]


@pytest.mark.parametrize("case, args, code, fragment", TURNS, ids=[c[0] for c in TURNS])
def test_turns_refuses_before_any_work(case, args, code, fragment, capfd, tmp_path, monkeypatch):
    monkeypatch.setattr(cgroups, "unavailable", lambda: "")
    result, _, err = cli(capfd, "run", "--schedule", "turns", "--out", str(tmp_path / "out"), *args)
    line = assert_one_line_error(result, err, code, fragment)
    assert "--schedule turns" in line and not (tmp_path / "out").exists()


def test_turns_without_a_freezer_is_exit_3(capfd, tmp_path, monkeypatch):
    from tdebench.runner import duet

    monkeypatch.setattr(cgroups, "unavailable", lambda: "")
    monkeypatch.setattr(duet, "freezer_base", lambda: None)
    result, _, err = cli(capfd, "run", "--schedule", "turns", "--engine", "mariadb", "--sf", "0.01",
                         "--out", str(tmp_path / "out"))
    line = assert_one_line_error(result, err, 3, "no cgroup freezer")
    assert "--schedule duet" in line and not (tmp_path / "out").exists()
