"""End to end on SQLite SF 0.01: --precision stops by itself, says so in the report, and resumes with
an open-ended number of blocks; --schedule query with --repeat records one value per query and block; an A/A
run (none,none) compares its second plain twin with the first."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.interruptible import default_sigint

pytestmark = pytest.mark.slow(seconds=150)  # a measured run of the whole module, loaded machine

ROOT = Path(__file__).resolve().parents[2]


def tdebench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "tdebench", *args], env=env, capture_output=True, text=True,
                          timeout=900)


def rows(run: Path) -> list[dict[str, str]]:
    with open(run / "measurements.csv", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def data(tpch_sf001) -> str:
    return str(Path(tpch_sf001[0]).parent)


def test_precision_aa_run_stops_by_itself_and_says_so(tmp_path: Path, data: str) -> None:
    out = tmp_path / "aa"
    done = tdebench("run", "--encryption", "none,none", "--schedule", "query", "--precision", "25%",
                    "--trials", "3", "--max-trials", "15", "--seed", "3", "--out", str(out), "--data-dir", data)
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [c["label"] for c in manifest["plan"]["configs"]] == ["sqlite-none", "sqlite-none-2"]
    entry = manifest["precision"]
    assert entry["stopped_by"] == "target met", entry
    decision = entry["decisions"]["sqlite-none-2"]
    assert decision["met"] and decision["half_width_pp"] <= 25 and 3 <= decision["n"] == manifest["blocks_run"] < 15
    assert [h["block"] for h in entry["history"]] == list(range(1, decision["n"] + 1))
    assert "half-width ±" in done.stderr  # progress after each block
    md = (out / "report" / "summary.md").read_text()
    assert f"Precision target ±25% met after {decision['n']} blocks" in md
    assert "Stopping rule (--precision 25%)" in md and "Query schedule" in md
    with open(out / "report" / "overhead.csv", newline="") as fh:
        head = next(r for r in csv.DictReader(fh) if r["config"] == "sqlite-none-2" and r["test"] == "power"
                    and r["step"] == "total" and r["metric"] == "elapsed")
    est, lo, hi = (float(head[k]) for k in ("overhead_pct", "ci_low_pct", "ci_high_pct"))
    assert head["ci_method"] == "seq-ar1-upper" and max(hi - est, est - lo) == pytest.approx(
        decision["half_width_pp"])  # the report's interval is the one that met the target
    cpu = [r for r in rows(out) if r["test"] == "power" and r["step"] == "total" and r["metric"] == "server_cpu"
           and r["status"] == "ok"]
    assert len(cpu) == 2 * decision["n"] and all(float(r["value"]) > 0 for r in cpu)
    assert all(c["config"] and "steal_pct" in c for c in manifest["conditions"])


def test_precision_on_power_at_size_watches_the_geometric_mean(tmp_path: Path, data: str) -> None:
    """--precision-metric power: the rule watches Power@Size, and the report's interval of it is the rule's."""
    out = tmp_path / "power"
    done = tdebench("run", "--encryption", "none,none", "--schedule", "query", "--precision", "25%",
                    "--precision-metric", "power", "--trials", "3", "--max-trials", "15", "--seed", "3",
                    "--out", str(out), "--data-dir", data)
    assert done.returncode == 0, done.stderr[-3000:]
    entry = json.loads((out / "manifest.json").read_text())["precision"]
    assert entry["target"] == "power" and entry["stopped_by"] == "target met", entry
    assert entry["headline"] == {"test": "power", "step": "power_at_size", "metric": "power_at_size"}, entry
    decision = entry["decisions"]["sqlite-none-2"]
    with open(out / "report" / "overhead.csv", newline="") as fh:
        head = next(r for r in csv.DictReader(fh) if r["config"] == "sqlite-none-2" and r["test"] == "power"
                    and r["step"] == "power_at_size" and r["metric"] == "power_at_size")
    est, lo, hi = (float(head[k]) for k in ("overhead_pct", "ci_low_pct", "ci_high_pct"))
    assert head["ci_method"] == "seq-ar1-upper" and max(hi - est, est - lo) == pytest.approx(
        decision["half_width_pp"])


def test_query_schedule_repeats_record_one_value_per_query_and_block(tmp_path: Path, data: str) -> None:
    out = tmp_path / "rep"
    done = tdebench("run", "--schedule", "query", "--repeat", "2", "--trials", "1", "--warmup", "0", "--seed", "5",
                    "--no-report", "--out", str(out), "--data-dir", data)
    assert done.returncode == 0, done.stderr[-3000:]
    power = [r for r in rows(out) if r["test"] == "power" and r["metric"] == "elapsed" and r["status"] == "ok"]
    for label in ("sqlite-none", "sqlite-sqlcipher-aes-256-cbc"):
        steps = [r["step"] for r in power if r["config"] == label]
        assert sorted(steps) == sorted([f"q{n:02d}" for n in range(1, 23)] + ["total", "rf1", "rf2"])
        total = next(float(r["value"]) for r in power if r["config"] == label and r["step"] == "total")
        queries = sum(float(r["value"]) for r in power if r["config"] == label and r["step"].startswith("q"))
        assert abs(total - queries) < 1e-6
    manifest = json.loads((out / "manifest.json").read_text())
    orders = manifest["schedule"]["orders"]["1"]
    assert manifest["schedule"]["effective"] == "query" and len(orders) == 22 * 2
    assert {o for o in orders} <= {"0-1", "1-0"} and len(set(orders)) == 2  # both orders occur


@pytest.mark.heavy  # runs killed and resumed in the default suite: tests/e2e/test_interrupt.py
def test_open_ended_run_resumes(tmp_path: Path, data: str) -> None:
    """Killed after its third block, a --precision run resumes and goes on adding blocks until --max-trials."""
    out = tmp_path / "resume"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    args = ["run", "--schedule", "query", "--precision", "0.01%", "--trials", "3", "--max-trials", "4",
            "--warmup", "0", "--seed", "9", "--no-report", "--out", str(out), "--data-dir", data]
    proc = subprocess.Popen([sys.executable, "-m", "tdebench", *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            history = json.loads((out / "manifest.json").read_text()).get("precision", {}).get("history", [])
        except (OSError, ValueError):
            history = []
        if len(history) >= 3:
            proc.send_signal(signal.SIGINT)
            break
        time.sleep(0.2)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err[-2000:]
    done = tdebench("run", "--resume", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["precision"]["stopped_by"] == "--max-trials" and manifest["status"] == "completed"
    trials = sorted((int(r["block"]), r["config"]) for r in rows(out)
                    if r["test"] == "trial" and r["status"] == "ok")
    assert trials == sorted((b, c) for b in range(1, 5) for c in ("sqlite-none", "sqlite-sqlcipher-aes-256-cbc"))
    outcome = manifest["precision"]["outcome"]["sqlite-sqlcipher-aes-256-cbc"]
    assert "NOT met: stopped by --max-trials after 4 blocks with a half-width of" in outcome
    assert "would be needed" in outcome or "more blocks" in outcome  # what it would take
