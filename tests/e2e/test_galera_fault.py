"""``--fault kill-node``: a node of each twin's 3-node cluster killed during the trial of block 1 and rejoined;
the run records the rejoin, flags the two trials (status ``fault``: out of n and of the intervals, counted in
overhead.csv, shown in the report), goes on to block 2, and leaves no process behind."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.availability import engine_missing

ROOT = Path(__file__).resolve().parents[2]
_MISSING = engine_missing("galera")
pytestmark = [pytest.mark.server, pytest.mark.skipif(bool(_MISSING), reason=_MISSING or "available")]


def _servers_of(parent: psutil.Process) -> dict[int, str]:
    """The servers (and transfer helpers) under the run's process, with the node directory of each server."""
    found = {}
    try:
        for proc in parent.children(recursive=True):
            try:
                if proc.name() in ("mariadbd", "rsync", "socat", "mariabackup"):
                    conf = [a.split("=", 1)[1] for a in proc.cmdline() if a.startswith("--defaults-file=")]
                    found[proc.pid] = str(Path(conf[0]).parent) if conf else ""
            except psutil.NoSuchProcess:
                continue
    except psutil.NoSuchProcess:
        pass
    return found


@pytest.mark.heavy  # two 3-node clusters; a node killed and rejoining is tested on one cluster in tests/engines
def test_a_node_of_each_twin_killed_during_a_trial_is_flagged_and_the_run_goes_on(tmp_path):
    out, work = tmp_path / "run", tmp_path / "work"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "tdebench", "run", "--engine", "galera", "--nodes", "3",
                             # sysbench's 1000 rows load in seconds (the fault and the run's handling of it are the
                             # same for every time-boxed workload: TPC-C's 100 MB took a minute to replicate)
                             "--encryption", "none,tde:aes-256-ctr", "--workload", "sysbench", "--workload-option",
                             "tables=1", "--workload-option", "table_size=1000",
                             "--vus", "2", "--duration", "6s", "--rampup", "1s", "--trials", "2", "--warmup", "0",
                             "--seed", "3", "--fault", "kill-node@40%,block=1", "--out", str(out), "--work-dir",
                             str(work)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    parent, seen = psutil.Process(proc.pid), {}
    deadline = time.monotonic() + 1500
    while proc.poll() is None and time.monotonic() < deadline:
        seen.update(_servers_of(parent))
        time.sleep(0.5)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr[-3000:]

    manifest = json.loads((out / "manifest.json").read_text())
    faults = {f["config"]: f for f in manifest["faults"]}
    assert set(faults) == {"galera-none", "galera-tde-aes-256-ctr"}  # one node of each twin
    for fault in faults.values():
        assert fault["block"] == 1 and fault["flagged"] and fault["injected"] and fault["node"] == "node3"
        assert fault["transfer"] in ("IST", "SST") and fault["seconds_to_synced"] > 0
        assert fault["commits_per_s_before"] > 0 and fault["commits_per_s_while_out"] is not None
        assert fault["headline"]["value"] > 0

    with open(out / "measurements.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    trials = [r for r in rows if r["test"] == "oltp_read_write" and r["step"] == "vu2" and r["metric"] == "tps"]
    assert {(r["config"], r["block"], r["status"]) for r in trials} == {
        ("galera-none", "1", "fault"), ("galera-tde-aes-256-ctr", "1", "fault"),
        ("galera-none", "2", "ok"), ("galera-tde-aes-256-ctr", "2", "ok")}  # the run went on to block 2
    assert {r["metric"] for r in rows if r["test"] == "fault"} >= {"seconds_to_synced", "commits_per_s_while_out"}
    with open(out / "report" / "overhead.csv", newline="") as handle:
        tps = next(r for r in csv.DictReader(handle) if r["step"] == "vu2" and r["metric"] == "tps")
    assert (tps["n"], tps["n_faulted"], tps["n_faulted_plain"]) == ("1", "1", "1")  # flagged: out of n
    report = (out / "report" / "summary.md").read_text()
    assert "## Faults" in report and "galera-tde-aes-256-ctr | 1 | kill-node@40%" in report
    assert "trial flagged" in stdout

    assert seen, "the cluster's servers were never seen"
    alive = [p for p in seen if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not alive, alive
    mine = [str(work), *{d for d in seen.values() if d}]  # relocated node directories too (tdebench-inst-*)
    left = [p.info for p in psutil.process_iter(["pid", "name", "cmdline"])
            if any(d in " ".join(p.info["cmdline"] or []) for d in mine)]
    assert not left, left
    assert not [d for d in mine if Path(d).exists() and d != str(work)]
    assert not any(work.iterdir()) if work.exists() else True
