"""--memory-ratio: bad input exits 2 (a bad value) or 3 (a ratio this machine has no memory for) with one line,
before any work: no run directory, no data, no server. (An engine without a cache to size is refused the same way:
tests/unit/test_memory_regime.py, since every built-in engine that runs here has one.)"""

from __future__ import annotations

import pytest

from tests.cli.test_bad_input import tdebench


@pytest.mark.parametrize("value, fragment", [
    ("0", "bad value '0' for --memory-ratio: '0' is not a cache/data ratio"),
    ("x", "bad value 'x' for --memory-ratio: 'x' is not a number"),
    ("0.1,0.1", "a ratio is listed twice"),
    ("-0.5", "is not a cache/data ratio"),
    ("nan", "is not a cache/data ratio"),
])
def test_a_bad_ratio_is_one_line_exit_2(value: str, fragment: str, tmp_path) -> None:
    result = tdebench("run", "--memory-ratio", value, "--out", str(tmp_path / "out"))
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "out").exists() and not result.stdout.strip()


def test_a_ratio_that_needs_more_memory_than_the_machine_has_is_one_line_exit_3(tmp_path) -> None:
    result = tdebench("run", "--memory-ratio", "0.5,100000", "--out", str(tmp_path / "out"))
    assert result.returncode == 3, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "--memory-ratio 100000 needs" in lines[0] and "of this machine's" in lines[0] and "fix:" in lines[0]
    assert not (tmp_path / "out").exists() and not result.stdout.strip()


def test_the_experiment_file_key_is_checked_too(tmp_path) -> None:
    path = tmp_path / "x.toml"
    path.write_text('[run]\nmemory_ratio = [0.5, "lots"]\n[[engines]]\nname = "sqlite"\n')
    result = tdebench("run", str(path), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "'lots' is not a number" in result.stderr and "run.memory_ratio" in result.stderr
