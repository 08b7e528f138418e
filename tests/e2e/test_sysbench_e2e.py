"""End to end: `tdebench run --workload sysbench` on MariaDB and PostgreSQL (when sysbench and the server exist)."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tdebench.encryption import issued_secrets
from tdebench.errors import UsageError
from tdebench.workloads.sysbench import runner
from tests.resultdoc import undocumented

HAVE_SYSBENCH = shutil.which("sysbench") is not None
HAVE_MARIADB = Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd") is not None
HAVE_POSTGRES = any(Path("/usr/lib/postgresql").glob("*/bin/postgres")) or shutil.which("postgres") is not None
pytestmark = [pytest.mark.server,
              pytest.mark.skipif(not HAVE_SYSBENCH, reason="sysbench is not installed (Debian package sysbench)")]


@pytest.fixture
def argv_seen(monkeypatch) -> list[list[str]]:
    """Every command line started during the test (subprocess.Popen is patched for the whole process)."""
    seen: list[list[str]] = []
    real = subprocess.Popen

    def spy(args, *a, **kw):
        seen.append([str(x) for x in args])
        return real(args, *a, **kw)

    monkeypatch.setattr(runner.subprocess, "Popen", spy)
    return seen


def run_sysbench(out: Path, engine: str, encryption: str) -> None:
    with pytest.raises(SystemExit) as code:
        main(["run", "--engine", engine, "--encryption", encryption, "--workload", "sysbench", "--vus", "1,2",
              "--duration", "2s", "--rampup", "1s", "--trials", "1", "--warmup", "0", "--out", str(out),
              "--schedule", "block",  # whole steps, as checked below (tests/engines/test_matrix.py runs the default)
              "--workload-option", "tables=1", "--workload-option", "table_size=2000"])
    assert code.value.code == 0, (out / "manifest.json").read_text() if (out / "manifest.json").exists() else ""


def check(run: Path, configs: list[str], argv_seen: list[list[str]]) -> None:
    with open(run / "measurements.csv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["status"] == "ok" and r["workload"] == "sysbench"]
    for config in configs:
        for n in (1, 2):
            got = {r["metric"]: float(r["value"]) for r in rows
                   if r["config"] == config and r["test"] == "oltp_read_write"
                   and r["step"] in (f"vu{n}", f"vu{n}.all")}
            assert got["tps"] > 0 and got["qps"] > got["tps"] and got["tpm"] == pytest.approx(60 * got["tps"])
            assert 0 < got["latency_p50"] <= got["latency_p95"] <= got["latency_p99"] <= got["latency_max"]
            assert {"errors", "reconnects", "transactions", "reads", "writes", "server_cpu_per_txn"} <= set(got)
            series = run / "samples" / config / f"sysbench-block001-oltp_read_write-vu{n}.csv"
            assert "measured" in series.read_text()
    assert json.loads((run / "manifest.json").read_text())["status"] == "completed"
    assert undocumented(run) == []
    assert "transactions/s vs virtual users" in (run / "report" / "index.html").read_text()
    secrets_ = [s for s in issued_secrets() if len(s) >= 16]
    runs = [a for a in argv_seen if Path(a[0]).name == "sysbench" and ("run" in a or "prepare" in a)]
    assert len(runs) == 3 * len(configs)  # per config: prepare, then one run per thread count
    for argv in runs:  # the password is never on a command line (ps would show it)
        assert not any(s in " ".join(argv) for s in secrets_), argv
        assert any(a.startswith("--config-file=/dev/fd/") for a in argv)
    for path in run.rglob("*"):
        if path.is_file():
            assert not any(s.encode() in path.read_bytes() for s in secrets_), f"secret in {path}"


@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadbd is not installed (Debian package mariadb-server)")
def test_mariadb(tmp_path, argv_seen):
    run_sysbench(tmp_path / "run", "mariadb", "tde:aes-256-ctr")  # one config keeps the test short
    check(tmp_path / "run", ["mariadb-tde-aes-256-ctr"], argv_seen)


@pytest.mark.skipif(not HAVE_POSTGRES or not shutil.which("gocryptfs"),
                    reason="PostgreSQL or gocryptfs is not installed (Debian packages postgresql, gocryptfs)")
def test_postgres(tmp_path, argv_seen):
    run_sysbench(tmp_path / "run", "postgres", "fs:gocryptfs")
    check(tmp_path / "run", ["postgres-fs-gocryptfs"], argv_seen)


def test_column_encryption_is_refused_before_any_work(tmp_path):
    from tdebench.cli import run as cli_run
    from tdebench.results.rundir import RunDirectory
    from tdebench.workloads import make_workload

    experiment = cli_run.experiment_from_options("postgres", "none,column:aes-256", {},
                                                 {"workload": "sysbench", "trials": 1})
    plan = cli_run.plan_from_experiment(experiment)
    with pytest.raises(UsageError, match="fs:gocryptfs"):
        make_workload(plan, RunDirectory.create(tmp_path / "run"))


@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadbd is not installed (Debian package mariadb-server)")
def test_mariadb_interleaved_slices_keep_one_connected_sysbench_per_config_and_step(tmp_path, argv_seen):
    """The default schedule: 1-s slices alternate between the twins, each twin's threads connected throughout."""
    from tdebench.workloads.sysbench.gated import SCRIPT

    out = tmp_path / "run"
    with pytest.raises(SystemExit) as code:
        main(["run", "--engine", "mariadb", "--encryption", "none,tde:aes-256-ctr", "--workload", "sysbench",
              "--vus", "2", "--duration", "3s", "--rampup", "1s", "--trials", "1", "--warmup", "0", "--out", str(out),
              "--workload-option", "tables=1", "--workload-option", "table_size=2000"])
    assert code.value.code == 0, (out / "manifest.json").read_text() if (out / "manifest.json").exists() else ""
    with open(out / "measurements.csv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["status"] == "ok" and r["test"] == "oltp_read_write"]
    for config in ("mariadb-none", "mariadb-tde-aes-256-ctr"):
        by_round: dict[str, dict[str, float]] = {}
        for r in rows:
            if r["config"] == config and r["step"] in ("vu2", "vu2.all"):
                by_round.setdefault(r["round"], {})[r["metric"]] = float(r["value"])
        assert sorted(by_round) == ["1", "2", "3"], by_round.keys()
        for got in by_round.values():
            assert got["tps"] > 0 and got["qps"] == pytest.approx(20 * got["tps"])  # oltp_read_write's mix
            assert 0 < got["latency_min"] <= got["latency_p50"] <= got["latency_p95"] <= got["latency_p99"] \
                <= got["latency_max"]
            assert got["transactions"] == pytest.approx(got["tps"] * 1.0, rel=0.5)  # a 1-s slice
        lines = (out / "samples" / config / "sysbench-block001-oltp_read_write-vu2-slices.csv").read_text().split()
        assert lines[0].startswith("round,seconds,transactions") and len(lines) == 4
        assert all(0.9 < float(line.split(",")[1]) < 2.0 for line in lines[1:])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schedule"]["slice_s"] == 1.0 and manifest["schedule"]["rounds_per_step"] == 3
    runs = [a for a in argv_seen if Path(a[0]).name == "sysbench" and "run" in a]
    assert len(runs) == 2 and all(str(SCRIPT) in a for a in runs)  # one per config and step, not one per slice
    assert undocumented(out) == []


@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadbd is not installed (Debian package mariadb-server)")
def test_a_connected_sysbench_leaves_by_itself_when_tdebench_is_killed(tmp_path):
    """The gated threads wait at a closed gate; if their parent dies (SIGKILL), nobody would stop them."""
    import os
    import signal
    import time

    import psutil

    from tdebench.encryption import parse_spec
    from tdebench.engines import Config, get_engine
    from tdebench.workloads.sysbench.accounts import sysbench_account
    from tdebench.workloads.sysbench.gated import GatedSysbench
    from tdebench.workloads.sysbench.options import SysbenchOptions

    tmp_path.chmod(0o711)
    engine = get_engine("mariadb")
    inst = engine.create_instance(Config("mariadb", parse_spec("none"), {}), tmp_path)
    inst.start()
    try:
        with sysbench_account(inst, engine.dialect.protocol) as account:
            opts = SysbenchOptions(table_size=1000, tables=1, vus=[2])
            assert runner.prepare(account, opts, "oltp_read_write", 2).code == 0
            pid_file = tmp_path / "sysbench.pid"
            child = os.fork()
            if child == 0:  # tdebench's stand-in: starts the process, runs a slice, then is killed
                try:
                    gated = GatedSysbench(account, opts, "oltp_read_write", 2, 1, tmp_path)
                    gated.start()
                    opened = gated.open_slice()
                    time.sleep(0.5)
                    ok = len(gated.close_slice(opened).latencies_us) > 0
                    written = pid_file.with_suffix(".tmp")
                    written.write_text(f"{gated.proc.pid} {int(ok)}")
                    written.rename(pid_file)  # the parent never reads a half-written file
                    time.sleep(120)
                finally:
                    os._exit(0)
            deadline = time.monotonic() + 60
            while not pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            sysbench_pid, ran = map(int, pid_file.read_text().split())
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            deadline = time.monotonic() + 10
            while psutil.pid_exists(sysbench_pid) and time.monotonic() < deadline:
                try:
                    if psutil.Process(sysbench_pid).status() == psutil.STATUS_ZOMBIE:
                        break
                except psutil.NoSuchProcess:
                    break
                time.sleep(0.05)
            gone = not psutil.pid_exists(sysbench_pid) or psutil.Process(sysbench_pid).status() == psutil.STATUS_ZOMBIE
            if not gone:
                os.kill(sysbench_pid, signal.SIGKILL)
            assert ran and gone
    finally:
        inst.destroy()
