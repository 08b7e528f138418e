"""Workload options (``--workload-option``, named flags, ``[run.options]``): every workload refuses an unknown
or ill-typed option with exit 2 and one line naming the key, the workload and what is allowed, before any work.

Runs are made unable to do work (no tpchgen-cli on PATH): a check that came too late would show up as exit 3
or as a run directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tdebench.workloads import workload_names

SRC = str(Path(__file__).resolve().parents[2] / "src")
PYTHON = sys.executable  # before the fixture hides it
pytestmark = pytest.mark.usefixtures("no_work_possible")
# a key each workload takes (shown in the 'allowed keys' of the error)
A_KEY = {"tpch": "sf", "tpcc": "warehouses", "crud": "batches", "load": "variants", "backup": "compression",
         "sysbench": "table_size", "sql": "dir", "replay": "speed", "encrypt": "threads"}
ILL_TYPED = [("tpcc", "warehouses", "two"), ("crud", "rows", "many"), ("load", "batch_rows", "lots"),
             ("backup", "compression", "zip"), ("sysbench", "tables", "x"), ("tpcc", "vus", "1,x")]


def cli(capfd, *args: str) -> tuple[int, str]:
    """``tdebench ARGS`` in this process: (exit code, stderr)."""
    capfd.readouterr()
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return int(info.value.code or 0), capfd.readouterr().err


def refused(code: int, err: str, out: Path, *fragments: str) -> str:
    """Exit 2, one stderr line holding every fragment and a fix, nothing written."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert all(f in lines[0] for f in fragments), lines[0]
    assert "fix:" in lines[0]
    assert not out.exists(), "the run directory was created before the options were checked"
    return lines[0]


def test_every_registered_workload_is_covered():
    assert set(A_KEY) == set(workload_names())


@pytest.mark.parametrize("workload", sorted(A_KEY))
def test_unknown_option_flag(workload, tmp_path, capfd):
    out = tmp_path / "out"
    code, err = cli(capfd, "run", "--workload", workload, "--workload-option", "bogus=1", "--out", str(out))
    refused(code, err, out, f"unknown {workload} option 'bogus'", "allowed keys", A_KEY[workload])


@pytest.mark.parametrize("workload", sorted(A_KEY))
def test_unknown_option_in_experiment_file(workload, tmp_path, capfd):
    path = tmp_path / "x.toml"
    path.write_text(f'[run]\nworkload = "{workload}"\nout = "{tmp_path / "out"}"\n[run.options]\nbogus = 1\n'
                    '[[engines]]\nname = "sqlite"\n')
    code, err = cli(capfd, "run", str(path))
    refused(code, err, tmp_path / "out", f"unknown {workload} option 'bogus'", A_KEY[workload])


@pytest.mark.parametrize("workload, key, value", ILL_TYPED, ids=[f"{w}-{k}" for w, k, _ in ILL_TYPED])
def test_ill_typed_option_flag(workload, key, value, tmp_path, capfd):
    out = tmp_path / "out"
    code, err = cli(capfd, "run", "--workload", workload, "--workload-option", f"{key}={value}", "--out", str(out))
    refused(code, err, out, f"bad value '{value}' for {workload} option '{key}'")


@pytest.mark.parametrize("options, fragment", [
    ('vus = [1, "x"]', "for tpcc option 'vus': 'x' is not a whole number"),
    ("warehouses = 1.5", "bad value 1.5 for tpcc option 'warehouses'"),
    ('keying_thinking = "maybe"', "bad value 'maybe' for tpcc option 'keying_thinking'"),
])
def test_ill_typed_option_in_experiment_file(options, fragment, tmp_path, capfd):
    path = tmp_path / "x.toml"
    path.write_text(f'[run]\nworkload = "tpcc"\n[run.options]\n{options}\n[[engines]]\nname = "sqlite"\n')
    code, err = cli(capfd, "run", str(path), "--out", str(tmp_path / "out"))
    refused(code, err, tmp_path / "out", fragment)


def test_flag_of_another_workload_is_refused(tmp_path, capfd):
    """--warehouses means nothing to TPC-H: refused, not ignored."""
    out = tmp_path / "out"
    code, err = cli(capfd, "run", "--warehouses", "2", "--out", str(out))
    refused(code, err, out, "unknown tpch option 'warehouses'", "allowed keys: queries, sf, streams, tests")


def test_tpch_data_flags_are_refused_by_workloads_that_do_not_take_them(tmp_path, capfd):
    """--sf means nothing to CRUD (its own --rows sets the size): refused, not ignored."""
    out = tmp_path / "out"
    code, err = cli(capfd, "run", "--workload", "crud", "--sf", "1", "--out", str(out))
    refused(code, err, out, "--sf does not apply to --workload crud")
    code, err = cli(capfd, "run", "--workload", "backup", "--tests", "throughput", "--out", str(out))
    refused(code, err, out, "--tests does not apply to --workload backup")


def test_crud_option_that_needs_another_is_checked_early(tmp_path, capfd):
    out = tmp_path / "out"
    code, err = cli(capfd, "run", "--workload", "crud", "--rows", "100", "--batches", "200", "--out", str(out))
    refused(code, err, out, "crud option 'batches'", "larger than rows")


def test_subprocess_tpch_option_exit_2(tmp_path):
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    result = subprocess.run([PYTHON, "-m", "tdebench", "run",
                             "--workload-option", "rows=4", "--out", str(tmp_path / "out")],
                            capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    refused(result.returncode, result.stderr, tmp_path / "out", "unknown tpch option 'rows'")


def _tpcc_file(tmp_path: Path) -> Path:
    path = tmp_path / "x.toml"
    path.write_text('[run]\nworkload = "tpcc"\n[run.options]\nwarehouses = 25\nvus = [5, 25]\n'
                    '[[engines]]\nname = "sqlite"\n')
    return path


@pytest.mark.parametrize("flags, fragment", [
    (("--warehouses", "0"), "bad value 0 for tpcc option 'warehouses'"),
    (("--vus", "1,x"), "for tpcc option 'vus': 'x' is not a whole number"),
    (("--workload-option", "bogus=1"), "unknown tpcc option 'bogus'"),
])
def test_workload_flags_typed_after_an_experiment_file_override_its_options(flags, fragment, tmp_path, capfd):
    """A flag after the file reaches the workload (a bad value is refused), it is not silently dropped."""
    out = tmp_path / "out"
    code, err = cli(capfd, "run", str(_tpcc_file(tmp_path)), *flags, "--out", str(out))
    refused(code, err, out, fragment)


def test_a_flag_overrides_one_key_of_the_files_options(tmp_path):
    from tdebench.cli.run import load_plan_file

    plan, _ = load_plan_file(_tpcc_file(tmp_path), {"trials": 1, "options": {"warehouses": 1}})
    assert plan.workload_options["warehouses"] == 1 and plan.workload_options["vus"] == [5, 25]
    assert plan.trials == 1


@pytest.mark.parametrize("flag", [("--engine", "mariadb"), ("--encryption", "none"), ("--workload", "crud"),
                                  ("--server-setting", "cache_size=-2000")])
def test_engine_flags_beside_an_experiment_file_are_refused_not_ignored(flag, tmp_path, capfd):
    out = tmp_path / "out"
    code, err = cli(capfd, "run", str(_tpcc_file(tmp_path)), *flag, "--out", str(out))
    refused(code, err, out, f"{flag[0]} cannot be combined with an experiment file")
