"""`tdebench run --target ...`: bad input exits 2 with one line (never echoing a password), before any work."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


def tdebench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env or {})}
    return subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True, env=full,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args, fragment", [
    (["--target", "a=mysql://bench:Hunter2pw@h/db"], "the URL contains a password"),
    (["--target", "a=mysql://bench@h/db#tde:aes-128-cbc"], "single key size: AES-256"),
    (["--target", "a=mysql://bench@h/db", "--engine", "mariadb"], "--target replaces --engine"),
    (["--target", "a=mysql://bench@h/db", "--engine", "sqlite"], "--target replaces --engine"),
    (["--target", "a=mysql://bench@h/db#tde:3des"], "has no 3DES"),
    (["--target", "a=mssql://sa@h/db#tde:aes-256-cbc"], "no mode option"),
    (["--target", "a=mysql://bench@h/db", "--cache", "cold"], "--cache cold needs a server tdebench can restart"),
    (["--target", "a=mysql://bench@h/db", "--reset", "snapshot"], "--reset snapshot copies data directories"),
    (["--target", "a=mysql://bench@h/db"], "target 'a': no password; fix: set TDEBENCH_PASSWORD_A"),
    (["--override-encryption-check", "a"], "applies to --target only"),
    (["--target", "a=mysql://bench@h/db", "--target", "b=oracle://bench@h/db"], "must be one DBMS"),
])
def test_bad_target_input(args, fragment, tmp_path):
    result = tdebench("run", *args, "--out", str(tmp_path / "run"))
    assert result.returncode == 2, result.stderr
    assert fragment in result.stderr and "Traceback" not in result.stderr
    assert "Hunter2pw" not in result.stderr + result.stdout
    assert not (tmp_path / "run").exists()  # refused before the run directory is created


def test_unreachable_target_is_an_environment_problem(tmp_path):
    result = tdebench("run", "--target", "a=mysql://bench@127.0.0.1:1/db", "--sf", "0.01", "--trials", "1",
                      "--out", str(tmp_path / "run"), env={"TDEBENCH_PASSWORD_A": "pw-not-shown-42"})
    assert result.returncode == 3, result.stderr
    assert "cannot connect to target 'a'" in result.stderr and "pw-not-shown-42" not in result.stderr


def test_run_help_lists_every_engine_it_takes():
    import typer

    from tdebench.cli.app import app
    from tdebench.engines import engine_names

    run = typer.main.get_command(app).commands["run"]
    engine_help = next(p for p in run.params if p.name == "engine").help
    names = [n for n in engine_names() if n != "external"]  # external is reached with --target
    assert "sqlite" in names and "mariadb" in names, names
    for name in names:
        assert re.search(rf"\b{name}\b", engine_help), (name, engine_help)


def test_engines_lists_per_scheme_limits():
    text = tdebench("engines").stdout
    assert "mysql://: none, tde:aes-256-cbc" in text and "mssql://: none, tde:aes-128" in text
    assert "InnoDB encrypts with AES-256 in CBC mode only" in text


@pytest.mark.parametrize("spec", ["column:bf", "column:pgp-cast5"])
def test_pgcrypto_blowfish_and_cast5_refused_with_the_reason(spec, tmp_path):
    result = tdebench("run", "--engine", "postgres", "--encryption", f"none,{spec}", "--out", str(tmp_path / "r"))
    assert result.returncode == 2 and "stores pgp_sym_encrypt" in result.stderr and "unknown cipher" not in result.stderr


def test_run_help_shows_the_defaults_written_in_its_texts():
    """A "[default: ...]" inside a help text was rich markup: --help showed "… before the next ."; the texts say
    their defaults in parentheses, shown as written in both layouts (tests/cli/test_help_width.py)."""
    result = tdebench("run", "--help", env={"COLUMNS": "300"})
    assert result.returncode == 0, result.stderr
    for shown in ("(default: turns with pages read from the disk", "(default: 0.01)", "(default: 1)",
                  "(default: on with --schedule query and a warm cache"):
        assert shown in result.stdout, shown
