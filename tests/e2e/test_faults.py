"""Faults: a server killed in the middle of a trial fails that trial only; the run goes on."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not (shutil.which("mariadbd") or Path("/usr/sbin/mariadbd").exists()),
                                reason="needs mariadbd (Debian package mariadb-server)")


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "measurements.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def _server_of(label: str, parent: int) -> psutil.Process | None:
    for proc in psutil.Process(parent).children(recursive=True):
        try:
            if proc.name() == "mariadbd" and label in " ".join(proc.cmdline()):
                return proc
        except psutil.NoSuchProcess:
            continue
    return None


def test_query_schedule_killed_server_fails_its_trial_only(tmp_path, tpch_sf001):
    """--schedule query: a twin's server killed in the middle of the interleaved steps fails that twin's trial;
    the other twin finishes the block, and the next block has both again."""
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "tdebench", "run", "--engine", "mariadb", "--encryption",
                             "none,tde:aes-256-ctr", "--trials", "2", "--warmup", "0", "--seed", "1", "--no-report",
                             "--schedule", "query", "--out", str(out), "--data-dir", str(Path(tpch_sf001[0]).parent)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    victim, killed = "mariadb-tde-aes-256-ctr", False
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None and not killed:
        try:
            flight = json.loads((out / "manifest.json").read_text()).get("in_flight") or {}
        except (OSError, ValueError):
            flight = {}
        if victim in flight.get("configs", []) and flight.get("block") == 1:
            time.sleep(0.3)  # inside the interleaved queries (a block of SF 0.01 takes about a second)
            server = _server_of(victim, proc.pid)
            if server is not None:
                server.send_signal(signal.SIGKILL)
                killed = True
        time.sleep(0.02)
    assert killed, "never saw the block start"
    _, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 1, stderr[-2000:]
    manifest = json.loads((out / "manifest.json").read_text())
    failure = next(f for f in manifest["failures"] if f["config"] == victim)
    assert failure["block"] == 1 and failure["reason"]
    done = {(r["block"], r["config"], r["status"]) for r in _rows(out) if r["test"] == "trial"}
    assert ("1", victim, "failed") in done and ("2", victim, "ok") in done, manifest["failures"]
    assert ("1", "mariadb-none", "ok") in done and ("2", "mariadb-none", "ok") in done
    assert manifest["schedule"]["effective"] == "query" and len(manifest["schedule"]["orders"]["2"]) == 22
