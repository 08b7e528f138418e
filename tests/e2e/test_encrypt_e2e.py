"""End to end: `tdebench run --workload encrypt` on a real MariaDB (1 warehouse, phases of 2 s, 2 encryption threads,
2 trials): the switch on and the way back are timed from the server's own status, the background's phases are
measured and paired per trial, the at-rest scan runs after each switch, the run directory is the documented one
(the matrix's MariaDB x encrypt pair), and nothing is left running."""

from __future__ import annotations

import csv
import json
import re
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tests.interruptible import default_sigint
from tests.resultdoc import undocumented

pytestmark = pytest.mark.slow(seconds=170)  # a measured run of the whole module, loaded machine

ROOT = Path(__file__).resolve().parents[2]
HAVE_MARIADB = Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd") is not None
CONFIG = "mariadb-tde-aes-256-ctr"
PHASES = ("before", "during_on", "after_on", "before_off", "during_off", "after_off")


def rows(run: Path) -> dict[tuple[str, str, str], list[float]]:
    out: dict[tuple[str, str, str], list[float]] = {}
    with open(run / "measurements.csv", newline="") as handle:
        for r in csv.DictReader(handle):
            if r["status"] == "ok" and r["test"] == "encrypt" and r["config"] == CONFIG:
                out.setdefault((r["step"], r["metric"]), []).append(float(r["value"]))
    return {("encrypt", *k): v for k, v in out.items()}


def encrypt_run(tmp_path: Path, tpcc_w1, *options: str, trials: int = 1, extra: tuple[str, ...] = ()) -> int:
    """The exit code of ``tdebench run --workload encrypt`` on MariaDB (tde:aes-256-ctr, one warehouse, a 48 MB redo
    log, no warm-up) with each of ``options`` as a ``--workload-option``; results in ``tmp_path/run``."""
    argv = ["run", "--engine", "mariadb", "--encryption", "tde:aes-256-ctr", "--workload", "encrypt", *extra,
            "--warehouses", "1", *(a for option in options for a in ("--workload-option", option)),
            "--server-setting", "innodb_log_file_size=48M", "--trials", str(trials), "--warmup", "0",
            "--out", str(tmp_path / "run"), "--data-dir", str(tpcc_w1[0].parent), "--work-dir", str(tmp_path / "work")]
    with pytest.raises(SystemExit) as code:
        main(argv)
    return code.value.code


@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadb-server is not installed")
def test_switch_on_and_back_under_tpcc(tmp_path, tpcc_w1):
    run = tmp_path / "run"
    code = encrypt_run(tmp_path, tpcc_w1, "steady=2s", "rampup=1s", "threads=2", "iops=1000", trials=2)
    assert code == 0, (run / "manifest.json").read_text()
    assert undocumented(run) == []  # every file and CSV column is in docs/result-format.md
    found = rows(run)
    for threads in (2,):  # one cycle: test_iops_swept_as_an_axis runs two of them
        for direction in ("on", "off"):
            times = found[("encrypt", f"t{threads}.{direction}", "time_to_done")]
            assert len(times) == 2 and all(t > 0 for t in times)
            assert all(n >= 9 for n in found[("encrypt", f"t{threads}.{direction}", "tablespaces")])  # TPC-C's 9+
            assert all(n > 0 for n in found[("encrypt", f"t{threads}.{direction}",
                                             "innodb_encryption_rotation_pages_modified")])
        for phase in PHASES:
            assert all(v > 0 for v in found[("encrypt", f"t{threads}.{phase}", "tpm")]), phase
            assert all(v >= 1 for v in found[("encrypt", f"t{threads}.{phase}", "seconds")]), phase
        assert len(found[("encrypt", f"t{threads}.during_on", "tpm_vs_before")]) == 2
        # re-keying under the background: every table rebuilt under the other key, as the server reports
        assert all(t > 0 for t in found[("encrypt", f"t{threads}.rekey", "time_to_done")])
        assert (found[("encrypt", f"t{threads}.rekey", "tables_on_new_key_count")]
                == found[("encrypt", f"t{threads}.rekey", "tables_count")])
        assert all(v > 0 for v in found[("encrypt", f"t{threads}.during_rekey", "tpm")])
        assert len(found[("encrypt", f"t{threads}.rekey.scan", "canary_hits_in_scope")]) == 2
        for metric in ("canary_hits_in_scope", "known_plaintext_hits_in_scope", "hits_outside_scope"):
            assert len(found[("encrypt", f"t{threads}.on.scan", metric)]) == 2
    assert found[("encrypt", "background", "errors")] == [0.0, 0.0]
    samples = run / "samples" / CONFIG
    series = list(csv.DictReader(open(samples / "encrypt-block002.csv", newline="")))
    assert {r["phase"] for r in series} >= {f"t2.{p}" for p in PHASES}
    assert any(r["switch_progress"] for r in series if "during" in r["phase"])
    facts = json.loads((samples / "encrypt-block001.json").read_text())
    assert facts["scans"]["t2.on"]["files_scanned"] > 0
    summary = json.loads((samples / "encrypt-summary.json").read_text())
    during = summary["phases"]["t2.during_on"]["tpm"]
    assert summary["trials"] == 2 and during["ci95_low"] <= during["geomean_ratio"] <= during["ci95_high"]
    verification = json.loads((run / "verification.json").read_text())["configs"][CONFIG]
    assert "deferred" in verification
    _starts_plaintext_and_restarts(run, found)
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert not left, f"processes left running: {left}"


def _starts_plaintext_and_restarts(run: Path, found: dict[tuple[str, str, str], list[float]]) -> None:
    """The switch starts from a plaintext server (no key plugin, the redo log in the clear: nothing encrypted
    during ``before``), the restarts that load the plugin and unload it after the way back are timed as downtime,
    and two trials are "not resolved"."""
    counters: dict[tuple[str, str], list[float]] = {}
    with open(run / "measurements.csv", newline="") as handle:
        for r in csv.DictReader(handle):
            if (r["config"], r["test"], r["status"]) == (CONFIG, "counters", "ok"):
                counters.setdefault((r["step"], r["metric"]), []).append(float(r["value"]))
    assert counters[("t2.before", "bytes_encrypted")] == [0.0, 0.0]  # while the background wrote its redo log:
    assert all(v > 0 for v in counters[("t2.before", "log_bytes")])
    assert all(v > 0 for v in counters[("t2.after_restart", "bytes_encrypted")])  # encrypted once restarted
    for restart in ("t2.restart_on", "t2.restart_off"):
        assert found[("encrypt", restart, "downtime")] == found[("encrypt", restart, "time_to_done")]
        assert all(v > 0 for v in found[("encrypt", restart, "downtime")])
    assert all(v > 0 for v in found[("encrypt", "t2.restart_off", "start_for_plain_redo_seconds")])  # two restarts
    assert ("encrypt", "t2.on", "downtime") not in found  # the switch itself is online
    config = next(c for c in json.loads((run / "manifest.json").read_text())["configs"] if c["label"] == CONFIG)
    assert config["switching"]["online"] and config["switching"]["restart"]
    assert "re-created without the key plugin" in config["start_plain"]["start"]
    summary = (run / "report" / "summary.md").read_text()
    switching = summary.split("## Switching encryption")[1].split("\n## ")[0]
    assert "(not resolved)" in switching and "(median of 2 trials)" in summary
    assert not re.search(r"× \[", switching)  # no interval of 2 trials is shown


@pytest.mark.parametrize("argv, words", [
    (["--engine", "sqlite", "--encryption", "sqlcipher:aes-256-cbc", "--workload-option", "method=online"],
     "cannot switch 'sqlcipher:aes-256-cbc' on in place while serving"),
    (["--engine", "sqlite", "--encryption", "fs:fscrypt"], "fix: use an engine and spec that can: galera with tde:*; "
                                                          "mariadb with tde:* or fs:*"),
    (["--engine", "duckdb", "--encryption", "{duckdb}"], "cannot switch encryption on in place"),
    (["--engine", "sqlite", "--encryption", "sqlcipher:aes-256-cbc", "--workload-option", "threads=2"],
     "encrypts offline by one statement"),
    (["--engine", "postgres", "--encryption", "column:aes-256", "--workload-option", "iops=100"],
     "encrypts offline, with no page rate"),
    (["--engine", "mariadb", "--encryption", "tde:aes-256-ctr", "--workload-option", "threads=0"], "0 encryption"),
    (["--engine", "mariadb", "--encryption", "tde:aes-256-ctr", "--workload-option", "method=offline"],
     "has no offline method"),
    (["--engine", "mariadb", "--encryption", "none"], "names no encryption"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, words):
    from tdebench.engines import get_engine

    duckdb = str(get_engine("duckdb").default_encrypted_spec())
    with pytest.raises(SystemExit) as code:
        main(["run", "--workload", "encrypt", *[a.replace("{duckdb}", duckdb) for a in argv],
              "--out", str(tmp_path / "run")])
    assert code.value.code == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "run").exists()


@pytest.mark.heavy  # an interrupted run ends cleanly and resumes: tests/e2e/test_interrupt.py (SQLite)
@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadb-server is not installed")
def test_interrupted_while_switching_ends_cleanly_and_resumes(tmp_path, tpcc_w1):
    """SIGINT as soon as the switch is set (my.cnf says innodb_encrypt_tables=ON): exit 130, no server left, the
    instance's files gone; the run then resumes to completion."""
    run, work = tmp_path / "run", tmp_path / "work"
    argv = [sys.executable, "-m", "tdebench", "run", "--engine", "mariadb", "--encryption", "tde:aes-256-ctr",
            "--workload", "encrypt", "--warehouses", "1", "--workload-option", "steady=2s",
            "--workload-option", "rampup=1s", "--workload-option", "threads=1", "--server-setting",
            "innodb_log_file_size=48M", "--trials", "1", "--warmup", "0", "--out", str(run),
            "--data-dir", str(tpcc_w1[0].parent), "--work-dir", str(work)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(tmp_path / "state")}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=default_sigint)
    roots: list[Path] = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        cnfs = list(work.glob("*/*/my.cnf"))
        if cnfs and "innodb_encrypt_tables=ON" in cnfs[0].read_text():
            roots = [cnfs[0].parent.resolve()]
            proc.send_signal(signal.SIGINT)
            break
        time.sleep(0.05)
    assert roots, "the switch was never set"
    assert proc.wait(timeout=120) == 130
    left = subprocess.run(["pgrep", "-f", str(roots[0])], capture_output=True, text=True).stdout.split()
    assert not left and not roots[0].exists(), (left, roots)
    resumed = subprocess.run([sys.executable, "-m", "tdebench", "run", "--resume", str(run)], env=env,
                             capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert rows(run)[("encrypt", "t1.on", "time_to_done")]


@pytest.mark.heavy  # the same check (EncryptWorkload.validate) by default: test_encrypt_offline.py's test of it on SQLite
@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadb-server is not installed")
def test_a_rate_the_baseline_cannot_reach_is_refused_not_lowered(tmp_path, tpcc_w1, capsys):
    assert encrypt_run(tmp_path, tpcc_w1, "rate=1000000", "steady=2s", "rampup=0") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "below rate=1e+06 (not lowered)" in err[-1], err


@pytest.mark.heavy  # the switch on, the rekeying and the scan under TPC-C: test_switch_on_and_back_under_tpcc
@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadb-server is not installed")
def test_tpch_beside_the_background_is_switched_rekeyed_and_scanned(tmp_path, tpcc_w1, tpch_sf001):
    """sf=0.01: TPC-H loaded plaintext into its own database beside TPC-C; the switch waits for its tablespaces too,
    the re-keying moves its tables to the other key as the server reports, the scan looks for its plaintext, and the
    switching table (report/switching.csv) has the switch on and the re-keying."""
    run = tmp_path / "run"
    assert tpch_sf001[0].parent == tpcc_w1[0].parent  # both under the session's data root: --data-dir
    code = encrypt_run(tmp_path, tpcc_w1, "steady=2s", "rampup=1s", "threads=1", "iops=1000", "way_back=false",
                       extra=("--sf", "0.01"))
    assert code == 0, (run / "manifest.json").read_text()
    found = rows(run)
    assert found[("encrypt", "t1.on", "tablespaces")][0] >= 9 + 8  # TPC-C's and TPC-H's, and the system's
    rekeyed = found[("encrypt", "t1.rekey", "tables_count")]
    assert rekeyed[0] >= 9 + 8 and found[("encrypt", "t1.rekey", "tables_on_new_key_count")] == rekeyed
    assert found[("encrypt", "t1.rekey", "tpch.lineitem_seconds")][0] > 0
    assert found[("encrypt", "t1.on.scan", "known_plaintext_hits_in_scope")] == [0.0]
    manifest = json.loads((run / "manifest.json").read_text())
    assert "DELIVER IN PERSON" not in json.dumps(manifest)  # plaintext strings are searched for, never written out
    sizes = manifest["configs"][0]["storage"]["tables"]  # the storage table covers TPC-H's database too
    assert {"orders", "tpch.lineitem", "tpch.orders"} <= set(sizes) and sizes["tpch.lineitem"]["table_bytes"] > 0
    with open(run / "report" / "switching.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert [(r["cycle"], r["action"]) for r in table] == [("t1", "on"), ("t1", "rekey")]
    assert table[1]["baseline_phase"] == "t1.before_rekey" and float(table[1]["p95_during_ratio"]) > 0
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert not left, f"processes left running: {left}"


@pytest.mark.heavy  # the axis is parsed and labelled in tests/unit; one cycle end to end: test_switch_on_and_back_...
@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadb-server is not installed")
def test_iops_swept_as_an_axis(tmp_path, tpcc_w1):
    """iops=200,5000: one cycle per page rate, each switch timed with the rate the server says it applied."""
    run = tmp_path / "run"
    code = encrypt_run(tmp_path, tpcc_w1, "steady=2s", "rampup=1s", "threads=1", "iops=200,5000", "rekey=no")
    assert code == 0, (run / "manifest.json").read_text()
    found = rows(run)
    for iops in (200, 5000):
        for direction in ("on", "off"):
            assert found[("encrypt", f"t1-iops{iops}.{direction}", "time_to_done")][0] > 0
    facts = json.loads((run / "samples" / CONFIG / "encrypt-block001.json").read_text())
    applied = {s["name"]: s["applied"]["innodb_encryption_rotation_iops"] for s in facts["switches"]}
    assert applied == {"t1-iops200.on": 200, "t1-iops200.off": 200, "t1-iops5000.on": 5000, "t1-iops5000.off": 5000}
    with open(run / "report" / "switching.csv", newline="") as handle:
        table = [(r["cycle"], r["threads"], r["iops"], r["action"]) for r in csv.DictReader(handle)]
    assert table == [("t1-iops200", "1", "200", "on"), ("t1-iops200", "1", "200", "off"),
                     ("t1-iops5000", "1", "5000", "on"), ("t1-iops5000", "1", "5000", "off")]
