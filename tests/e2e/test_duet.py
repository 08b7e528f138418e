"""End to end: ``--schedule duet`` with real cgroups on SQLite (TPC-H SF 0.01) and MariaDB (TPC-H SF 0.01, a few
TPC-C slices), and a SIGKILLed duet run whose cgroups ``tdebench cleanup`` removes. Skipped where this machine
cannot make the twins' cgroups (not root, no cgroup controllers)."""

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

from tdebench.cli.app import main
from tdebench.runner import cgroups

pytestmark = [pytest.mark.slow(seconds=45),
              pytest.mark.skipif(bool(cgroups.unavailable()), reason=f"no cgroups here: {cgroups.unavailable()}")]

ROOT = Path(__file__).resolve().parents[2]
HAVE_MARIADB = Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd") is not None
QUERIES = [f"q{n:02d}" for n in range(1, 23)]


@pytest.fixture(scope="module")
def data(tpch_sf001) -> str:
    return str(Path(tpch_sf001[0]).parent)


def _run(out: Path, *args: str) -> dict:
    with pytest.raises(SystemExit) as code:
        main(["run", "--schedule", "duet", "--warmup", "0", "--no-report", "--out", str(out), *args])
    manifest = json.loads((out / "manifest.json").read_text())
    assert code.value.code == 0, manifest.get("status")
    return manifest


def _rows(out: Path, test: str) -> list[dict[str, str]]:
    with open(out / "measurements.csv", newline="") as handle:
        return [r for r in csv.DictReader(handle) if r["test"] == test and r["status"] == "ok"]


def _check_schedule(manifest: dict, measured: list[str]) -> None:
    """Every measured step ran as a pair of both twins, the CPU sets swapped every pair, the groups are gone."""
    entry = manifest["schedule"]
    labels = [c["label"] for c in manifest["plan"]["configs"]]
    for pairs in entry["pairs"].values():
        names = [p[0] for p in pairs]
        assert sorted(n for n in names if n in measured) == sorted(measured)  # once each (in the stream's order)
        assert all(p[2] is not None for p in pairs if p[0] in measured)  # both released: skew measured
        assert all(a[1] != b[1] for a, b in zip(pairs, pairs[1:]))
    assert entry["skew_us"]["pairs"] == len(measured) * len(entry["pairs"])
    groups = entry["cgroups"]["groups"]
    assert sorted(groups) == sorted(labels)
    assert not any(Path(p).exists() for paths in groups.values() for p in paths)  # removed at the end


def test_sqlite_tpch_power_runs_side_by_side(tmp_path, data):
    out = tmp_path / "run"
    manifest = _run(out, "--engine", "sqlite", "--sf", "0.01", "--trials", "1", "--data-dir", data)
    _check_schedule(manifest, QUERIES)
    waits = _rows(out, "duet")
    for label in ("sqlite-none", "sqlite-sqlcipher-aes-256-cbc"):
        cpu = {r["step"]: float(r["value"]) for r in waits if r["config"] == label and r["metric"] == "cgroup_cpu"}
        assert set(cpu) == {*QUERIES, "total"}
        assert cpu["total"] > 0  # the statements ran in host processes inside the twin's group
        power = {r["step"] for r in _rows(out, "power") if r["config"] == label}
        assert {*QUERIES, "total"} <= power
    assert not any(p.startswith("sqlite-none") for p in manifest.get("problems", []))


@pytest.mark.server
@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadbd not installed")
def test_mariadb_tpch_power_runs_side_by_side(tmp_path, data):
    out = tmp_path / "run"
    manifest = _run(out, "--engine", "mariadb", "--sf", "0.01", "--encryption", "none,tde:aes-256-ctr",
                    "--trials", "1", "--data-dir", data)
    _check_schedule(manifest, QUERIES)
    assert manifest["restarts"]["every_block"]  # as with the interleaved schedule
    waits = _rows(out, "duet")
    for label in ("mariadb-none", "mariadb-tde-aes-256-ctr"):
        mine = {(r["step"], r["metric"]): float(r["value"]) for r in waits if r["config"] == label}
        assert mine[("total", "cgroup_cpu")] > 0  # the server's work was counted in the twin's group
        assert ("total", "read_bytes") in mine and ("q01", "cpu_wait") in mine


@pytest.mark.heavy  # the duet on MariaDB in the default suite: test_mariadb_tpch_power_runs_side_by_side; slices: fake engine
@pytest.mark.server
@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadbd not installed")
def test_mariadb_tpcc_slices_run_side_by_side(tmp_path, tpcc_w1):
    out = tmp_path / "run"
    manifest = _run(out, "--engine", "mariadb", "--encryption", "none,none", "--workload", "tpcc",
                    "--warehouses", "1", "--vus", "2", "--duration", "3s", "--rampup", "1s", "--trials", "1",
                    "--data-dir", str(tpcc_w1[0].parent))
    rounds = ["vu2#1", "vu2#2", "vu2#3"]
    _check_schedule(manifest, rounds)
    assert [p[0] for p in manifest["schedule"]["pairs"]["1"]] == ["begin", "ready:vu2", "ready:vu2", *rounds,
                                                                         "finish"]
    tpm = {(r["config"], r["round"]) for r in _rows(out, "tpcc") if r["metric"] == "tpm"}
    assert tpm == {(c, str(k)) for c in ("mariadb-none", "mariadb-none-2") for k in (1, 2, 3)}
    waits = {(r["config"], r["round"]) for r in _rows(out, "duet") if r["metric"] == "cpu_wait"}
    assert waits == tpm  # what each twin waited on, in every pair


def test_a_killed_duet_run_leaves_no_cgroup_after_cleanup(tmp_path, data):
    state = tmp_path / "state"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(state)}
    proc = subprocess.Popen([sys.executable, "-m", "tdebench", "run", "--engine", "sqlite", "--sf", "0.01",
                             "--schedule", "duet", "--trials", "50", "--warmup", "0", "--no-report",
                             "--data-dir", data, "--out", str(tmp_path / "run")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        groups: list[str] = []
        deadline = time.monotonic() + 90
        while not groups and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            for record in (state / "tdebench" / "owned").glob("*.json"):
                try:
                    groups = [g for g in json.loads(record.read_text()).get("cgroups", []) if Path(g).is_dir()]
                except (OSError, ValueError):
                    continue
        assert groups, "the run made no cgroup in time"
        time.sleep(1.0)  # into its pairs
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert all(Path(g).is_dir() for g in groups)  # what the killed run left
    result = subprocess.run([sys.executable, "-m", "tdebench", "cleanup"], env=env, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert not any(Path(g).exists() for g in groups), result.stdout
    assert not list((state / "tdebench" / "owned").glob("*.json"))
    deadline = time.monotonic() + 10  # the processes that ran the statements leave once tdebench is gone
    while _left(tmp_path / "run") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _left(tmp_path / "run")


def _left(out: Path) -> list[int]:
    """Live processes of the killed run (their command line names its --out)."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        if proc.info["status"] != psutil.STATUS_ZOMBIE and str(out) in " ".join(proc.info["cmdline"] or []):
            found.append(proc.info["pid"])
    return found


def test_cleanup_lists_and_removes_the_cgroups_of_a_dead_run(tmp_path):
    """A record as a killed duet run leaves it: its groups (one still holding a process, which goes back to
    tdebench's group) are listed by --dry-run and removed by cleanup."""
    from tests.e2e.test_interrupt_cleanup import _dead_pid

    owner, started = _dead_pid()
    group = cgroups.TwinGroup(f"{cgroups.PREFIX}{owner}-duet-0")
    group.create()
    group.set_cpus("0")
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        group.add_process(sleeper.pid)
        assert sleeper.pid in group.processes()
        state = tmp_path / "state"
        (state / "tdebench" / "owned").mkdir(parents=True)
        record = {"version": 1, "run_id": "duetrun", "run_dir": str(tmp_path / "run"), "keep": False,
                  "owner": {"pid": owner, "started": started, "argv": ["tdebench", "run"]}, "dirs": [],
                  "servers": [], "cgroups": [str(p) for p in group.paths]}
        (state / "tdebench" / "owned" / f"{owner}-duetrun.json").write_text(json.dumps(record))
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(state)}
        listing = subprocess.run([sys.executable, "-m", "tdebench", "cleanup", "--dry-run"], env=env,
                                 capture_output=True, text=True, timeout=60, check=False)
        assert all(str(p) in listing.stdout for p in group.paths) and all(p.is_dir() for p in group.paths)
        result = subprocess.run([sys.executable, "-m", "tdebench", "cleanup"], env=env, capture_output=True,
                                text=True, timeout=60, check=False)
        assert result.returncode == 0, result.stderr
        assert not any(p.exists() for p in group.paths) and sleeper.poll() is None  # moved out, not killed
    finally:
        sleeper.kill()
        sleeper.wait()
        group.release()
