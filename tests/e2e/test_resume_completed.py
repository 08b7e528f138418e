"""A run killed (SIGKILL) after its last trial, before or while its report is written: ``tdebench run --resume``
builds the report, prints the summary and exits 0; once the report is complete, ``--resume`` says so and names
``tdebench report DIR``, which works.

The kill comes from inside the real run: a small launcher starts the CLI with the report's writer (or the
summary) replaced by a SIGKILL of the process itself, so it dies at exactly that point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow(seconds=40)

# the run dies when it reaches ``point``: after summary.csv and overhead.csv, before index.html (a partial
# report), or before the summary (no report at all)
LAUNCHER = """
import os, signal, sys
point = sys.argv[1]
import tdebench.report.build as build
import tdebench.cli.run as run
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
if point == "html":
    build.render_html.render = die
else:
    import tdebench.report.model as model
    model.summarize = die
from tdebench.cli.app import main
main(sys.argv[2:])
"""


def tdebench(*args: str, env: dict[str, str], launcher: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", LAUNCHER, launcher] if launcher else [sys.executable, "-m", "tdebench"]
    return subprocess.run([*argv, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def env(tmp_path):
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(tmp_path / "state")}


@pytest.mark.parametrize("point", ["html", pytest.param("summary", marks=pytest.mark.heavy)])  # one point by default
def test_resume_of_a_run_killed_while_writing_its_report_builds_it(tmp_path, env, tpch_sf001, point):
    out = tmp_path / "run"
    killed = tdebench("run", "--engine", "sqlite", "--encryption", "none,sqlcipher:aes-256-cbc", "--trials", "1",
                      "--warmup", "0", "--tests", "power", "--workload-option", "queries=1,18", "--out", str(out),
                      "--data-dir", str(Path(tpch_sf001[0]).parent), "--work-dir", str(tmp_path / "work"), env=env,
                      launcher=point)
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert json.loads((out / "manifest.json").read_text())["status"] == "completed"
    assert not (out / "report" / "index.html").exists()
    if point == "html":
        assert (out / "report" / "overhead.csv").is_file()  # partial: the tables were written

    resumed = tdebench("run", "--resume", str(out), env=env)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "its report is missing or partial" in resumed.stdout
    assert "sqlite-sqlcipher-aes-256-cbc" in resumed.stdout  # the summary, as at the end of a run
    assert (out / "report" / "index.html").is_file() and (out / "report" / ".complete").is_file()
    assert "report:" in resumed.stdout

    again = tdebench("run", "--resume", str(out), env=env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"tdebench report {out}" in again.stdout and "already completed" in again.stdout
    rebuilt = tdebench("report", str(out), env=env)  # the command it names works
    assert rebuilt.returncode == 0, rebuilt.stderr[-2000:]
    assert (out / "report" / ".complete").is_file()
