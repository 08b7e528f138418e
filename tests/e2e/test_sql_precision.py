"""`--precision` on a user's own workload, end to end with docs/examples/orders-sql: the statements interleaved
across two plain twins (an A/A test), the rule watching the reads' and the writes' totals, on SQLite and on
MariaDB (whose servers restart before every block); the report's intervals of both headlines are the rule's."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMAND = ["run", "--workload", "sql", "--workload-dir", "docs/examples/orders-sql", "--encryption", "none,none",
           "--precision", "50%", "--precision-metric", "reads,writes", "--trials", "3", "--max-trials", "4",
           "--duration", "200ms", "--slice", "50ms", "--seed", "7"]


def run_command(tmp_path: Path, engine: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-m", "tdebench", *COMMAND, "--engine", engine, "--out", str(out),
                           "--data-dir", str(tmp_path / "data"), "--work-dir", str(tmp_path / "work")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return done, out


def check_precision_run(done: subprocess.CompletedProcess[str], out: Path, twin: str) -> dict:
    """Both headlines watched and decided every block, the stop explained, the report's rows the rule's."""
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    entry = manifest["precision"]
    assert [w["name"] for w in entry["watched"]] == ["reads", "writes"] and entry["target"] == "reads,writes"
    decisions = {name: entry["headlines"][name]["decisions"][twin] for name in ("reads", "writes")}
    met = all(d["met"] for d in decisions.values())
    assert entry["stopped_by"] == ("target met" if met else "--max-trials"), entry
    assert [h["block"] for h in entry["history"]] == list(range(1, manifest["blocks_run"] + 1))
    assert f"precision {twin}: n = 1: reads " in done.stderr
    schedule = manifest["schedule"]
    assert schedule["effective"] == "query" and set(schedule["runs_per_visit"]) >= {"q1_customer_orders", "new_orders"}
    with open(out / "report" / "overhead.csv", newline="") as fh:
        heads = {r["step"]: r for r in csv.DictReader(fh) if r["config"] == twin and r["test"] == "sql"
                 and r["metric"] == "elapsed" and r["step"] in ("reads", "writes")}
    for name, row in heads.items():
        est, lo, hi = (float(row[k]) for k in ("overhead_pct", "ci_low_pct", "ci_high_pct"))
        assert row["ci_method"] == "seq-ar1-upper" and max(hi - est, est - lo) == pytest.approx(
            decisions[name]["half_width_pp"]), (name, row)
    assert set(heads) == {"reads", "writes"}
    return manifest


@pytest.mark.slow(seconds=40)
def test_sql_precision_on_sqlite(tmp_path):
    done, out = run_command(tmp_path, "sqlite")
    manifest = check_precision_run(done, out, "sqlite-none-2")
    assert manifest["restarts"]["every_block"] is False  # an embedded engine has no server to restart


@pytest.mark.heavy  # the same rule on SQLite in the default suite; restarts of servers: tests/e2e/test_restarts.py
@pytest.mark.server
@pytest.mark.slow(seconds=60)
@pytest.mark.skipif(not (shutil.which("mariadbd") or Path("/usr/sbin/mariadbd").exists()),
                    reason="needs mariadbd (Debian package mariadb-server)")
def test_sql_precision_on_mariadb(tmp_path):
    done, out = run_command(tmp_path, "mariadb")
    manifest = check_precision_run(done, out, "mariadb-none-2")
    restarts = manifest["restarts"]
    assert restarts["every_block"] is True and len(restarts["blocks"]) == manifest["blocks_run"]
