"""Interrupting runs at random points (SIGINT, SIGTERM, SIGKILL + `tdebench cleanup`) leaves no process, mount
or temporary directory behind within 10 s, and every interrupted run resumes to completion.

A short version of ``benchmarks/interrupt_runs.py`` (which interrupts 20 runs): three SQLite runs and one
server run when a server engine is installed. The seed is printed; set TDEBENCH_INTERRUPT_SEED to replay.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from tests.benchscripts import load

pytestmark = pytest.mark.slow(seconds=250)  # a measured run of the whole module, loaded machine

H = load("interrupt_runs")
SEED = int(os.environ.get("TDEBENCH_INTERRUPT_SEED", random.randrange(1 << 30)))
SERVER = next(iter(H.available_engines(["postgres", "mariadb"])), None)
CASES = [("sqlite", signal.SIGINT), ("sqlite", signal.SIGTERM), ("sqlite", signal.SIGKILL)]
CASES += [(SERVER, signal.SIGTERM)] if SERVER else []
PARAMS = [pytest.param(e, s, id=f"{e}-{s.name}", marks=[pytest.mark.server] if e != "sqlite" else []) for e, s in CASES]
if SERVER is None:  # shown as a skip with its reason, not as a test that passes having run nothing
    PARAMS.append(pytest.param("server", signal.SIGTERM, id="server-SIGTERM", marks=pytest.mark.skip(
        reason="no server engine (mariadb, postgres with gocryptfs) installed: only SQLite runs interrupted")))


@pytest.fixture(scope="module")
def harness(tpch_sf001):
    base = Path(tempfile.mkdtemp(prefix="t10-interrupt-", dir="/tmp"))
    yield H.Harness(base, Path(tpch_sf001[0]).parent)
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("engine, sig", PARAMS)
def test_interrupted_run_leaves_nothing_and_resumes(harness, engine, sig):
    rng = random.Random(f"{SEED}-{engine}-{sig.name}")
    delay = round(rng.uniform(1.0, H.PROFILES[engine][1] * 0.8), 2)
    print(f"seed {SEED}: {engine} {sig.name} after {delay}s")
    outcome = harness.interrupt(f"{engine}-{sig.name.lower()}", engine, sig, delay)
    print(outcome.line())
    assert not outcome.left_processes, outcome.left_processes
    assert not outcome.left_mounts, outcome.left_mounts
    assert not outcome.left_dirs, outcome.left_dirs
    assert outcome.settle_s is not None and outcome.settle_s <= H.SETTLE, outcome.line()
    assert outcome.resumed in ("completed", "restarted", "finished before the signal"), outcome.line()
    if sig != signal.SIGKILL and outcome.resumed == "completed":
        assert outcome.exit_code == 130, outcome.line()
