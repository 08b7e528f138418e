"""Bad input exits 2 with one line naming the problem and the fix, and no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


def tdebench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


@pytest.mark.parametrize("args, fragment", [
    (["run", "--engine", "nosuchdb"], "unknown engine 'nosuchdb'"),
    (["run", "--encryption", "none,wat"], "unknown encryption spec 'wat'"),
    (["run", "--encryption", "none,tde:aes-128-cbc"], "does not support encryption 'tde:aes-128-cbc'"),
    (["run", "--encryption", "tde:aes-512-cbc"], "unknown cipher 'aes-512-cbc'"),
    (["run", "--sf", "0"], "bad value 0.0 for --sf: Input should be greater than 0"),
    (["run", "--sf", "-1"], "bad value -1.0 for --sf"),
    (["run", "--sf", "0.002"], "TPC-H at SF 0.002 repeats a supplier of part 101 in PARTSUPP"),
    (["run", "--workload", "load", "--sf", "0.005"], "TPC-H at SF 0.005 repeats a supplier"),
    (["run", "--trials", "0"], "bad value 0 for --trials: Input should be greater than or equal to 1"),
    (["run", "--cache", "tepid"], "bad value 'tepid' for --cache: 'warm' or 'cold'"),
    (["run", "--tests", "power,nope"], "bad value 'nope' for --tests"),
    (["run", "--streams", "0"], "bad value 0 for --streams"),
    (["run", "--engine", "sqlite,nosuch"], "unknown engine 'nosuch'"),
    (["run", "nosuch.toml"], "cannot read experiment file nosuch.toml"),
    (["run", "--resume", "/nonexistent/run"], "is not a tdebench run directory"),
    (["run", "--sf", "abc"], "Invalid value for '--sf'"),
    (["run", "--server-setting", "page_size"], "bad --server-setting 'page_size'"),
    (["run", "--server-setting", "page_size=1000"], "bad page_size 1000"),
    (["run", "--server-setting", "nosuch=1"], "unknown sqlite setting 'nosuch'"),
    (["run", "--no-such-option"], "No such option"),
    (["report", "/nonexistent/run"], "is not a tdebench run directory"),
    (["frobnicate"], "No such command"),
])
def test_bad_input_is_one_line_exit_2(args, fragment, tmp_path):
    result = tdebench(*args, "--out", str(tmp_path / "out")) if args[0] == "run" else tdebench(*args)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert fragment in lines[0]
    assert "Traceback" not in result.stderr and ("fix" in lines[0] or "--help" in lines[0]), lines[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_unwritable_out_is_exit_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = tdebench("run", "--out", str(blocker / "run"))
    assert result.returncode == 2
    assert "cannot write the output directory" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_debug_shows_the_traceback():
    result = tdebench("run", "--engine", "nosuchdb", "--debug")
    assert result.returncode == 2
    assert "Traceback" in result.stderr


def test_version_and_engines():
    assert tdebench("--version").stdout.startswith("tdebench ")
    listing = tdebench("engines")
    assert listing.returncode == 0
    assert "sqlcipher:aes-256-cbc" in listing.stdout
