"""``tdebench decide``: bad input is refused with exit 2 and one line naming the fix, before any work (no decision
directory, no work directory, no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.refusal import refused_before_work

pytestmark = pytest.mark.usefixtures("no_work_possible")

ORDERS = Path(__file__).resolve().parents[2] / "docs" / "examples" / "orders-sql"


def refused(capfd, tmp_path, *args: str) -> str:
    """``tdebench decide ARGS`` refused before any work (:func:`tests.cli.refusal.refused_before_work`)."""
    return refused_before_work(capfd, tmp_path, "decide", *args)


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
