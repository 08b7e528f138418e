"""A TPC-C run killed with SIGKILL while its virtual users run: they leave by themselves (they die with their
parent), `tdebench cleanup` ends whatever is left and says how many, and 10 s later no virtual user is there.

Forked virtual users hold each other's pipe ends and wait on shared events: without that, nothing would ever end
them. SQLite keeps the test short (no server), and so does one config alone (no encrypted twin to load: what is
killed is the virtual users, whatever their config); the interrupt benchmark (benchmarks/interrupt_runs.py) does
the same on MariaDB and Galera."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow(seconds=60)


def virtual_users(pid: int) -> list[psutil.Process]:
    """The children tdebench forked (they share its command line: the virtual users)."""
    try:
        parent = psutil.Process(pid)
        return [c for c in parent.children() if c.cmdline() == parent.cmdline()]
    except psutil.Error:
        return []


def alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except psutil.Error:
            continue
    return out


def test_virtual_users_leave_when_tdebench_is_killed(tmp_path, tpcc_w1):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(tmp_path / "state")}
    run = subprocess.Popen(
        [sys.executable, "-m", "tdebench", "run", "--engine", "sqlite", "--encryption", "none",
         "--workload", "tpcc", "--warehouses", "1", "--vus", "2", "--duration", "60s", "--rampup", "1s",
         "--trials", "1", "--warmup", "0", "--out", str(tmp_path / "run"), "--data-dir",
         str(Path(tpcc_w1[0]).parent), "--work-dir", str(tmp_path / "work")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    vus: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 240
        while len(vus) < 2 and run.poll() is None and time.monotonic() < deadline:
            vus = virtual_users(run.pid)
            time.sleep(0.1)
        assert len(vus) >= 2, f"no virtual users started: {run.stderr.read() if run.poll() is not None else ''}"
        time.sleep(2)  # into the ramp-up and the measured window
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
        killed = time.monotonic()
        cleanup = subprocess.run([sys.executable, "-m", "tdebench", "cleanup"], env=env, capture_output=True,
                                 text=True, timeout=120)
        assert cleanup.returncode == 0, cleanup.stderr
        assert "other process(es)" in cleanup.stdout, cleanup.stdout  # the count of clients it ended
        while alive(vus) and time.monotonic() < killed + 10:
            time.sleep(0.1)
        assert not alive(vus), f"virtual users still running 10 s after the kill: {[p.pid for p in alive(vus)]}"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for proc in alive(vus):
            proc.kill()
