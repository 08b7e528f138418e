"""What the in-process CLI tests share: a test directory where no work is possible (no state outside it, no
programs, no Python to start), and a command that must be refused before any work."""

from __future__ import annotations

import sys

import pytest

from tdebench.cli.app import main


@pytest.fixture
def no_work_possible(tmp_path, monkeypatch):
    """State in the test's directory; no program on PATH and no Python to start: a refusal comes before work."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    monkeypatch.chdir(tmp_path)


def refused_before_work(capfd, tmp_path, command: str, *args: str) -> str:
    """``tdebench COMMAND ARGS --out out --work-dir work`` in-process: exit 2, one stderr line with a fix, no
    traceback, nothing made; the line."""
    capfd.readouterr()
    with pytest.raises(SystemExit) as info:
        main([command, *args, "--out", str(tmp_path / "out"), "--work-dir", str(tmp_path / "work")])
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert info.value.code == 2, err
    assert len(lines) == 1 and "Traceback" not in err and "fix:" in lines[0], err
    assert not (tmp_path / "out").exists() and not (tmp_path / "work").exists()
    return lines[0]
