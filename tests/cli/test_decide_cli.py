"""``tdebench decide``: bad input is refused with exit 2 and one line naming the fix, before any work (no decision
directory, no work directory, no server)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tdebench.cli.app import main

ORDERS = Path(__file__).resolve().parents[2] / "docs" / "examples" / "orders-sql"


@pytest.fixture(autouse=True)
def _no_work_possible(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    monkeypatch.chdir(tmp_path)


def refused(capfd, tmp_path, *args: str) -> str:
    """``tdebench decide ARGS --out out --work-dir work`` in-process: exit 2, one stderr line, nothing made."""
    capfd.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["decide", *args, "--out", str(tmp_path / "out"), "--work-dir", str(tmp_path / "work")])
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert info.value.code == 2, err
    assert len(lines) == 1 and "Traceback" not in err and "fix:" in lines[0], err
    assert not (tmp_path / "out").exists() and not (tmp_path / "work").exists()
    return lines[0]


def test_an_engine_with_one_mechanism(capfd, tmp_path):
    line = refused(capfd, tmp_path, "--engine", "mysql", "--workload-dir", str(ORDERS))
    assert "engine 'mysql' has one way to encrypt (tde:aes-256-cbc)" in line
    assert "tdebench run --engine mysql --encryption none,tde:aes-256-cbc" in line and "mariadb" in line


def test_an_unknown_attacker_lists_the_known_ones(capfd, tmp_path):
    line = refused(capfd, tmp_path, "--engine", "sqlite", "--workload-dir", str(ORDERS), "--against",
                   "stolen-disk,burglar")
    assert "unknown attacker 'burglar'" in line and "stolen-disk, stolen-datadir" in line and "host-root" in line


def test_a_budget_below_the_lower_bound_says_the_bound(capfd, tmp_path):
    line = refused(capfd, tmp_path, "--engine", "sqlite", "--workload-dir", str(ORDERS), "--budget", "30s")
    assert "--budget 30 s is below the lower bound of this decision" in line
    assert "× 3 trials × 25 s of fixed phases" in line and "give --budget" in line


@pytest.mark.parametrize("args, fragment", [
    (["--engine", "sqlite"], "decide needs --engine and --workload-dir"),
    (["--engine", "sqlite", "--workload-dir", str(ORDERS), "--mechanisms", "sqlcipher"], "names 1 mechanism"),
    (["--engine", "sqlite", "--workload-dir", str(ORDERS), "--budget", "soon"], "--budget 'soon'"),
    (["--engine", "sqlite", "--workload-dir", str(ORDERS), "--precision", "0%"], "--precision '0%'"),
    (["--engine", "sqlite", "--workload-dir", str(ORDERS), "--switch-option", "steady=-1s"], "steady"),
    (["--engine", "external", "--workload-dir", str(ORDERS)], "decide runs one engine it starts itself"),
], ids=["no-workload", "one-mechanism", "budget", "precision", "switch-option", "external"])
def test_other_bad_input(args, fragment, capfd, tmp_path):
    assert fragment in refused(capfd, tmp_path, *args)
