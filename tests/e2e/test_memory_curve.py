"""docs/examples/mariadb-memory-curve.toml end to end at a test size: MariaDB twins swept over buffer pool sizes,
the cost curve in the report, engine counters recorded per step."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from tests.e2e import examples as ex
from tests.e2e.test_runner import tdebench

HAVE_MARIADB = Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd") is not None


@pytest.mark.server
@pytest.mark.skipif(not HAVE_MARIADB, reason="MariaDB is not installed (Debian package mariadb-server)")
def test_mariadb_memory_curve_example(tmp_path, tpch_sf001):
    """The example as shipped is valid; a copy at SF 0.01, two ratios and one trial runs and draws the curve."""
    copy = ex.sized_copy(ex.example("mariadb-memory-curve"), tmp_path, sf=0.01, memory_ratio=[0.5, 2], trials=1)
    # a smaller redo log for the test (settings go in the file: --server-setting beside a file is refused)
    copy.write_text(copy.read_text() + '\n[engines.settings]\ninnodb_log_file_size = "32M"\n')
    out = tmp_path / "run"
    result = tdebench("run", str(copy), "--out", str(out), "--data-dir", str(Path(tpch_sf001[0]).parent))
    assert result.returncode == 0, result.stderr[-3000:]
    ex.check_example_run(out)
    manifest = json.loads((out / "manifest.json").read_text())
    regimes = manifest["memory"]["regimes"]
    assert len(regimes) == 6 and {r["memory_ratio"] for r in regimes.values()} == {0.5, 2}
    sizes = {label: r["cache_bytes"] for label, r in regimes.items()}
    assert sizes["mariadb-none@mem2"] == sizes["mariadb-tde-aes-256-ctr@mem2"]  # twins: identical caches
    with open(out / "measurements.csv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["status"] == "ok"]
    q6 = {(r["config"], r["metric"]): float(r["value"]) for r in rows if r["test"] == "counters" and r["step"] == "q06"}
    assert q6[("mariadb-tde-aes-256-ctr@mem2", "cache_requests")] > 0
    assert q6[("mariadb-none@mem0.5", "bytes_decrypted")] == 0
    assert {r["step"] for r in rows if r["test"] == "power" and r["metric"] == "elapsed"} == {"rf1", "q06", "rf2", "total"}
    # pages read from the disk at 0.5 only: each twin's time at the block's common wait per read beside its total
    waits = {r["config"] for r in rows if r["metric"] == "at_common_wait"}
    assert len(waits) == 3 and all(w.endswith("@mem0.5") for w in waits), waits
    [per_read] = manifest["common_wait_per_read_s"]["0.5"].values()  # one block at 0.5, none at 2
    assert 0 < per_read < 0.1 and list(manifest["common_wait_per_read_s"]) == ["0.5"]
    md = (out / "report" / "summary.md").read_text()
    assert f"Each of those reads waited {per_read * 1e6:.1f} µs on average" in md
    assert "## TDE cost curve: overhead vs cache size" in md and "### mariadb: power total" in md
    assert "at a 50% cache/data ratio" in md.lower() and "tde:aes-128-cbc" in md
