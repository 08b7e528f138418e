"""End to end: ``--schedule turns`` on MariaDB (TPC-H SF 0.01, turns shortened so that they happen inside its
short queries), the freezer on a real process, and ``tdebench cleanup`` of a killed run whose server was frozen.
Skipped where this machine cannot make the twins' cgroups or has no cgroup freezer."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tdebench.runner import cgroups, turns
from tdebench.runner.freezer import Freezer, freezer_base

pytestmark = [pytest.mark.slow(seconds=80),
              pytest.mark.skipif(bool(cgroups.unavailable()), reason=f"no cgroups here: {cgroups.unavailable()}"),
              pytest.mark.skipif(freezer_base() is None, reason="no cgroup freezer here")]

ROOT = Path(__file__).resolve().parents[2]
HAVE_MARIADB = Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd") is not None
QUERIES = [f"q{n:02d}" for n in range(1, 23)]


def _ticks(pid: int) -> int:
    """User + system clock ticks of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])


def _spinner() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def test_a_held_process_stops_and_runs_again_once_released():
    group = cgroups.TwinGroup(f"{cgroups.PREFIX}{os.getpid()}-turns-test")
    freezer = Freezer.for_twin(group.name, group)
    group.create()
    freezer.create()
    spinner = _spinner()
    try:
        freezer.adopt([spinner.pid])
        freezer.freeze()
        freezer.wait_frozen()
        before = _ticks(spinner.pid)
        time.sleep(0.3)
        assert _ticks(spinner.pid) == before  # it did not run while held
        freezer.release()
        time.sleep(0.3)
        assert _ticks(spinner.pid) > before
    finally:
        freezer.release()
        spinner.kill()
        spinner.wait()
        for path in [*freezer.owned, *group.paths]:
            cgroups.remove_group(path)


def test_cleanup_ends_a_server_a_killed_run_left_frozen(tmp_path):
    """A frozen process ignores SIGKILL until it runs again: cleanup lets it run, then ends it."""
    from tests.e2e.test_interrupt_cleanup import _dead_pid
    from tdebench.runner.owned import started_at

    owner, started = _dead_pid()
    group = cgroups.TwinGroup(f"{cgroups.PREFIX}{owner}-duet-0")
    freezer = Freezer.for_twin(group.name, group)
    group.create()
    freezer.create()
    server = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        group.add_process(server.pid)
        freezer.adopt([server.pid])
        freezer.freeze()
        freezer.wait_frozen()
        state = tmp_path / "state"
        (state / "tdebench" / "owned").mkdir(parents=True)
        record = {"version": 1, "run_id": "turnsrun", "run_dir": str(tmp_path / "run"), "keep": False,
                  "owner": {"pid": owner, "started": started, "argv": ["tdebench", "run"]}, "dirs": [],
                  "servers": [{"pid": server.pid, "started": started_at(server.pid), "name": "sleep",
                               "pid_file": str(tmp_path / "server.pid"), "paths": []}],
                  "cgroups": [str(p) for p in [*group.paths, *freezer.owned]]}
        (state / "tdebench" / "owned" / f"{owner}-turnsrun.json").write_text(json.dumps(record))
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(state)}
        result = subprocess.run([sys.executable, "-m", "tdebench", "cleanup"], env=env, capture_output=True,
                                text=True, timeout=60, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        assert server.wait(timeout=5) is not None
        assert not any(Path(p).exists() for p in record["cgroups"])
    finally:
        freezer.release()
        server.kill()
        server.wait()
        for path in [*freezer.owned, *group.paths]:
            cgroups.remove_group(path)


@pytest.fixture(scope="module")
def data(tpch_sf001) -> str:
    return str(Path(tpch_sf001[0]).parent)


@pytest.mark.server
@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadbd not installed")
def test_mariadb_tpch_power_from_the_disk_takes_turns_by_default(tmp_path, data, monkeypatch, capsys):
    """No --schedule, --pin, --warmup or --precision-metric: a run whose misses are read from the disk takes turns
    (every query of every block a pair, the running twin changing inside them), pinned, without a warm-up block, its
    stopping rule watching the time at a common wait per read; it says so, and leaves no cgroup behind."""
    monkeypatch.setattr(turns, "TURN_SECONDS", 0.003)  # SF 0.01's queries last a few ms to 60 ms
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as code:
        main(["run", "--memory-ratio", "0.5", "--precision", "50%", "--trials", "3", "--max-trials", "3",
              "--no-report", "--out", str(out), "--engine", "mariadb", "--sf", "0.01", "--encryption",
              "none,tde:aes-256-ctr", "--data-dir", data])
    manifest = json.loads((out / "manifest.json").read_text())
    assert code.value.code == 0, manifest.get("status")
    cpus = len(os.sched_getaffinity(0))
    plan = manifest["plan"]
    assert plan["disk_defaults"] == ["schedule", *(["pin"] if cpus > 1 else []), "warmup", "precision_metric"]
    assert (plan["schedule"], plan["warmup_trials"], plan["precision_metric"]) == ("turns", 0, "common-wait")
    assert manifest["precision"]["headline"]["metric"] == "at_common_wait"
    if cpus > 1:
        assert manifest["settle"]["pin"]["reason"].startswith("the default with pages read from the disk")
    assert "pages are read from the disk: taking turns (--schedule turns)" in capsys.readouterr().out
    entry = manifest["schedule"]
    assert entry["name"] == "turns" and entry["cpu_slots"][0] == entry["cpu_slots"][1]  # both twins, the same CPUs
    assert sorted(entry["pairs"]) == ["1", "2", "3"]  # no warm-up block before them
    pairs = [p for block in entry["pairs"].values() for p in block if p[0] in QUERIES]
    assert sorted({p[0] for p in pairs}) == QUERIES and len(pairs) == 3 * len(QUERIES)
    assert sum(p[3] for p in pairs) >= 5  # the running twin changed inside the queries' pairs
    assert entry["holds"]["count"] >= sum(p[3] for p in pairs)
    labels = ("mariadb-none@mem0.5", "mariadb-tde-aes-256-ctr@mem0.5")
    with open(out / "measurements.csv", newline="") as handle:
        ok = [r for r in csv.DictReader(handle) if r["status"] == "ok"]
    for label in labels:
        assert {*QUERIES, "total"} <= {r["step"] for r in ok if r["config"] == label and r["test"] == "power"}
    assert {(r["config"], r["block"]) for r in ok if r["metric"] == "at_common_wait"} == {
        (label, block) for label in labels for block in ("1", "2", "3")}
    groups = [p for paths in entry["cgroups"]["groups"].values() for p in paths]
    assert groups and not any(Path(p).exists() for p in groups)
    assert not list(Path("/sys/fs/cgroup/freezer").glob(f"{cgroups.PREFIX}{os.getpid()}-duet-*"))
