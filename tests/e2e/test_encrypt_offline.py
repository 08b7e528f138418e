"""End to end: `tdebench run --workload encrypt` on engines that cannot switch while serving (SQLCipher's
sqlcipher_export copy and PRAGMA rekey; pgcrypto's UPDATE of every encrypted column): the background stops for
the switch, the time, the disk taken meanwhile and the scans are recorded, the report draws the timeline, and an
interrupt while the engine is encrypting leaves nothing behind."""

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

import pytest

from tdebench.cli.app import main
from tests.interruptible import default_sigint
from tests.resultdoc import undocumented

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
HAVE_POSTGRES = any(Path("/usr/lib/postgresql").glob("*/bin/postgres"))


def rows(run: Path, config: str) -> dict[tuple[str, str], list[float]]:
    out: dict[tuple[str, str], list[float]] = {}
    with open(run / "measurements.csv", newline="") as handle:
        for r in csv.DictReader(handle):
            if r["status"] == "ok" and r["test"] == "encrypt" and r["config"] == config:
                out.setdefault((r["step"], r["metric"]), []).append(float(r["value"]))
    return out


def run_encrypt(tmp_path: Path, tpcc_w1, argv: list[str]) -> Path:
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as code:
        main(["run", "--workload", "encrypt", "--warehouses", "1", "--workload-option", "steady=1s",
              "--workload-option", "rampup=0", "--workload-option", "vus=1", "--trials", "1", "--warmup", "0",
              *argv, "--out", str(run), "--data-dir", str(tpcc_w1[0].parent), "--work-dir", str(tmp_path / "work")])
    assert code.value.code == 0, (run / "manifest.json").read_text()
    return run


def test_sqlcipher_export_rekey_and_back_with_the_timeline(tmp_path, tpcc_w1):
    run = run_encrypt(tmp_path, tpcc_w1, ["--engine", "sqlite", "--encryption", "sqlcipher:aes-256-cbc"])
    found = rows(run, "sqlite-sqlcipher-aes-256-cbc")
    for switch in ("offline.on", "offline.rekey", "offline.off"):
        assert found[(switch, "time_to_done")][0] > 0
        # a copy (export) or a rollback journal (rekey) as big as the database exists meanwhile
        assert found[(switch, "peak_extra_bytes")][0] > 0.5 * found[(switch, "bytes_before")][0], switch
    assert found[("offline.on", "export_seconds")][0] > 0 and ("offline.rekey", "rekey_seconds") in found
    for phase in ("before", "after_on", "after_rekey", "after_off"):
        assert found[(f"offline.{phase}", "tpm")][0] > 0, phase
    assert ("offline.during_on", "tpm") not in found  # the background was stopped: nothing measured, not zero
    for scan in ("offline.on.scan", "offline.rekey.scan"):
        assert found[(scan, "canary_hits_in_scope")] == [0.0]
        assert found[(scan, "known_plaintext_hits_in_scope")] == [0.0]
    series = list(csv.DictReader(open(run / "samples" / "sqlite-sqlcipher-aes-256-cbc" / "encrypt-block001.csv")))
    assert {r["background"] for r in series if r["phase"] == "offline.during_on"} == {"stopped"}
    html = (run / "report" / "index.html").read_text()
    assert 'aria-label="sqlite-sqlcipher-aes-256-cbc: switching on, re-keying, switching off (trial 1)"' in html
    switching = html[html.index('id="switching"'):]
    assert "offline: service stopped" in switching and switching.count("<tr>") >= 4  # header + on, rekey, off
    if CHROMIUM.exists():
        png = tmp_path / "report.png"
        shot = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
                               f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}",
                               "--window-size=1280,3000", (run / "report" / "index.html").as_uri()],
                              capture_output=True, text=True, timeout=120)
        assert shot.returncode == 0 and png.stat().st_size > 10_000, shot.stderr[-2000:]


@pytest.mark.skipif(not HAVE_POSTGRES, reason="postgresql is not installed")
def test_pgcrypto_update_bloats_until_vacuum_full(tmp_path, tpcc_w1):
    run = run_encrypt(tmp_path, tpcc_w1, ["--engine", "postgres", "--encryption", "column:aes-256",
                                          "--server-setting", "encrypt_columns=item.i_data,stock.s_data"])
    found = rows(run, "postgres-column-aes-256")
    before = found[("offline.on", "tables_before_bytes")][0]
    bloated = found[("offline.on", "tables_after_update_bytes")][0]
    assert bloated > 1.5 * before  # every row written again, the old versions dead
    assert found[("offline.on", "tables_after_vacuum_bytes")][0] > 1.5 * before  # VACUUM gives nothing back
    assert found[("offline.on", "tables_after_vacuum_full_bytes")][0] < 0.8 * bloated
    assert found[("offline.on", "columns_count")] == [3.0]  # i_data, s_data and the canaries' marker
    assert found[("offline.on", "update_seconds")][0] > 0 and found[("offline.off", "time_to_done")][0] > 0
    # re-keyed by UPDATE: every row decrypted with the old key and encrypted with the new one, bloating again
    assert found[("offline.rekey", "tables_after_update_bytes")][0] > 1.5 * found[("offline.rekey",
                                                                                   "tables_before_bytes")][0]
    assert found[("offline.after_rekey", "tpm")][0] > 0  # the background reads through the views with the new key
    assert ("offline.on.scan", "canary_hits_in_scope") in found
    # the WAL written before the switch still holds the plaintext: a finding the scan reports, never hides
    assert found[("offline.on.scan", "known_plaintext_hits_in_scope")][0] > 0
    assert found[("offline.after_off", "tpm")][0] > 0


def test_a_rate_the_baseline_cannot_reach_is_refused_not_lowered(tmp_path, tpcc_w1, capsys):
    with pytest.raises(SystemExit) as code:
        main(["run", "--engine", "sqlite", "--encryption", "sqlcipher:aes-256-cbc", "--workload", "encrypt",
              "--warehouses", "1", "--workload-option", "rate=1000000", "--workload-option", "steady=1s",
              "--workload-option", "rampup=0", "--trials", "1", "--warmup", "0", "--out", str(tmp_path / "run"),
              "--data-dir", str(tpcc_w1[0].parent), "--work-dir", str(tmp_path / "work")])
    assert code.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "below rate=1e+06 (not lowered)" in err[-1], err


def _sqlite_exporting(work: Path) -> Path | None:
    """The instance directory while sqlcipher_export writes the encrypted copy."""
    found = list(work.glob("*/*/*.db.switch"))
    return found[0].parent if found else None


def _postgres_updating(work: Path) -> Path | None:
    """The data directory while a backend of its own server runs an UPDATE (the caller asks for it on several polls
    in a row: the switch's UPDATE takes seconds, the background's milliseconds, and the background is stopped)."""
    for pidfile in list(work.glob("*/*/postmaster.pid")) + list(work.glob("*/*/*/postmaster.pid")):
        try:
            postmaster = pidfile.read_text().split()[0]
        except (OSError, IndexError):
            continue
        children = subprocess.run(["ps", "--ppid", postmaster, "-o", "args="], capture_output=True, text=True).stdout
        if any(" UPDATE" in line for line in children.splitlines()):
            return pidfile.parent
    return None


CASES = [(["--engine", "sqlite", "--encryption", "sqlcipher:aes-256-cbc"], _sqlite_exporting, 1)]
if HAVE_POSTGRES:
    CASES.append((["--engine", "postgres", "--encryption", "column:aes-256"], _postgres_updating, 3))


@pytest.mark.parametrize("engine, encrypting, polls", CASES, ids=[c[0][1] for c in CASES])
def test_interrupted_while_encrypting_ends_cleanly(tmp_path, tpcc_w1, engine, encrypting, polls):
    """SIGINT while the engine's offline method runs: exit 130, no process or mount below the work dir, the
    instance's files gone."""
    run, work = tmp_path / "run", tmp_path / "work"
    argv = [sys.executable, "-m", "tdebench", "run", *engine, "--workload", "encrypt", "--warehouses", "1",
            "--workload-option", "steady=1s", "--workload-option", "rampup=0", "--workload-option", "vus=1",
            "--trials", "1", "--warmup", "0", "--out", str(run), "--data-dir", str(tpcc_w1[0].parent),
            "--work-dir", str(work)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(tmp_path / "state")}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=default_sigint)
    seen, deadline = 0, time.monotonic() + 300
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            seen = seen + 1 if encrypting(work) is not None else 0
            if seen >= polls:
                proc.send_signal(signal.SIGINT)
                break
            time.sleep(0.5 if polls > 1 else 0.02)
        assert seen >= polls, "the engine was never seen encrypting"
        assert proc.wait(timeout=180) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert not left, f"processes left running: {left}"
    mounts = Path("/proc/mounts").read_text()
    assert str(tmp_path) not in mounts
    assert not [p for p in work.rglob("*") if p.is_file() and p.suffix in (".db", ".switch")]
    assert not list(work.rglob("PG_VERSION"))


def run_tpch_alone(tmp_path: Path, tpch_sf001, argv: list[str]) -> Path:
    """``--sf 0.01`` on an engine that switches offline: TPC-H alone, no TPC-C, no background."""
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as code:
        main(["run", "--workload", "encrypt", "--sf", "0.01", "--trials", "1", "--warmup", "0", *argv,
              "--out", str(run), "--data-dir", str(tpch_sf001[0].parent), "--work-dir", str(tmp_path / "work")])
    assert code.value.code == 0, (run / "manifest.json").read_text()
    return run


def check_tpch_alone(run: Path, tpch_sf001, config: str) -> dict[str, list[str]]:
    """What both engines show: the three switches timed with their disk, the control scan before the switch seeing
    every TPC-H table's sampled value and the canaries, nothing of TPC-C or a background, the switching table's
    three rows, and no sampled value written out. Returns the in-scope files with hits per scan."""
    from tdebench.workloads.encrypt.workload import sampled_values
    from tdebench.workloads.tpch.workload import TpchWorkload

    assert undocumented(run) == []  # every file and CSV column is in docs/result-format.md (the matrix relies on it)
    found = rows(run, config)
    for switch in ("offline.on", "offline.rekey", "offline.off"):
        assert found[(switch, "time_to_done")][0] > 0 and found[(switch, "peak_extra_bytes")][0] > 0, switch
        assert found[(switch, "bytes_before")][0] > 5_000_000, switch  # TPC-H SF 0.01 (about 10 MB raw)
    values = sampled_values(tpch_sf001[0])
    assert len(values) == 8 and all(len(v) >= 10 for v in values)
    known = len(TpchWorkload.known_plaintext) + len(values)
    assert found[("offline.plain.scan", "known_plaintext_found_in_scope")] == [float(known)]  # every table seen
    assert found[("offline.plain.scan", "canary_hits_in_scope")][0] > 0
    assert not [k for k in found if k[1] in ("tpm", "nopm")]  # no background ran
    with open(run / "measurements.csv", newline="") as handle:
        steps = {r["step"] for r in csv.DictReader(handle) if r["test"] == "load"}
    assert "tpch.lineitem" in steps and "total" not in steps  # TPC-H loaded, TPC-C not
    with open(run / "report" / "switching.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert [(r["cycle"], r["action"]) for r in table] == [("offline", "on"), ("offline", "rekey"), ("offline", "off")]
    written = "".join(p.read_text(errors="replace") for p in run.rglob("*") if p.suffix in (".json", ".csv", ".md"))
    assert not [v for v in values if v in written]  # searched for, never written out
    facts = json.loads((run / "samples" / config / "encrypt-block001.json").read_text())
    return {name: scan["files_with_hits_in_scope"] for name, scan in facts["scans"].items()}


def test_sqlcipher_switches_tpch_alone_and_the_scan_covers_it(tmp_path, tpch_sf001, capsys):
    """SQLCipher at SF 0.01: before the switch the scan finds every TPC-H table's sampled value in the file; after
    the copy (and after the re-keying) none, nor any canary."""
    run = run_tpch_alone(tmp_path, tpch_sf001, ["--engine", "sqlite", "--encryption", "sqlcipher:aes-256-cbc"])
    terminal = " ".join(capsys.readouterr().out.split())
    assert "re-keying and back with no background running" in terminal and "under the background" not in terminal
    assert "│ stopped" not in terminal  # no background ran, so none was stopped
    files = check_tpch_alone(run, tpch_sf001, "sqlite-sqlcipher-aes-256-cbc")
    found = rows(run, "sqlite-sqlcipher-aes-256-cbc")
    assert found[("offline.on", "peak_extra_bytes")][0] > 0.5 * found[("offline.on", "bytes_before")][0]
    assert files["offline.plain"] and not files["offline.on"] and not files["offline.rekey"]
    for scan in ("offline.on.scan", "offline.rekey.scan"):
        for metric in ("canary_hits_in_scope", "known_plaintext_hits_in_scope", "known_plaintext_found_in_scope"):
            assert found[(scan, metric)] == [0.0], (scan, metric)


@pytest.mark.skipif(not HAVE_POSTGRES, reason="postgresql is not installed")
def test_pgcrypto_switches_tpch_alone_and_the_scan_covers_it(tmp_path, tpch_sf001):
    """pgcrypto at SF 0.01 (every non-key column): the UPDATE bloats TPC-H's tables until VACUUM FULL; before the
    switch the scan finds every table's sampled value in the table files; after it, the table files hold none: what
    is left is in the WAL written before, and in the planner's statistics (pg_statistic, OID 2619, and its TOAST
    table, 2840: ANALYZE's most common values of the columns now encrypted), findings the scan reports."""
    run = run_tpch_alone(tmp_path, tpch_sf001, ["--engine", "postgres", "--encryption", "column:aes-256"])
    files = check_tpch_alone(run, tpch_sf001, "postgres-column-aes-256")
    found = rows(run, "postgres-column-aes-256")
    assert found[("offline.on", "tables_after_update_bytes")][0] > 1.5 * found[("offline.on", "tables_before_bytes")][0]
    assert found[("offline.on", "columns_count")][0] > 30  # TPC-H's non-key columns and the canaries' marker
    tables = [f for f in files["offline.plain"] if f.startswith("base/") and f.rpartition("/")[2] not in ("2619",
                                                                                                          "2840")]
    assert len(tables) >= 8  # a file of every TPC-H table
    for scan in ("offline.on", "offline.rekey"):
        left = [f for f in files[scan] if not f.startswith("pg_wal/") and f.rpartition("/")[2] not in ("2619",
                                                                                                      "2840")]
        assert not left, (scan, left)
