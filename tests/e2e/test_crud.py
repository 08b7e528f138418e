"""End to end: `tdebench run --workload crud` on SQLite/SQLCipher (always) and MariaDB TDE (when installed)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import examples as ex
from tests.resultdoc import undocumented

ROOT = Path(__file__).resolve().parents[2]
HAVE_MARIADB = Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd") is not None


def tdebench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True, env=env,
                          timeout=900)


def ok_rows(run: Path) -> list[dict[str, str]]:
    with open(run / "measurements.csv", newline="") as handle:
        return [r for r in csv.DictReader(handle) if r["status"] == "ok"]


@pytest.fixture(scope="module")
def sqlite_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("crud") / "run"
    data = tmp_path_factory.mktemp("crud-data")
    # blocks 1 and 2 are checked; a warm-up block would add nothing the checks look at
    result = tdebench("run", "--engine", "sqlite", "--workload", "crud", "--rows", "20000", "--batches", "2000,5000",
                      "--trials", "2", "--warmup", "0", "--out", str(out), "--data-dir", str(data))
    assert result.returncode == 0, result.stderr[-3000:]
    assert undocumented(out) == []  # every file and CSV column is in docs/result-format.md
    return out


def test_every_operation_and_batch_has_its_metrics(sqlite_run: Path) -> None:
    rows = [r for r in ok_rows(sqlite_run) if r["test"] == "crud"]
    assert {r["workload"] for r in rows} == {"crud"}
    for config in ("sqlite-none", "sqlite-sqlcipher-aes-256-cbc"):
        for block in ("1", "2"):
            mine = {(r["step"], r["metric"]) for r in rows if r["config"] == config and r["block"] == block}
            for k in (2000, 5000):
                for op in ("select", "insert", "delete"):
                    for metric in ("elapsed", "server_cpu", "bytes", "mb_per_s", "rows", "table_bytes_before",
                                   "table_bytes_after"):
                        assert (f"{op}_{k}", metric) in mine, (config, block, op, k, metric)
    resources = {r["step"] for r in ok_rows(sqlite_run) if r["test"] == "resources"}
    assert {"select_2000", "insert_5000", "delete_5000"} <= resources


def test_twins_hold_equal_data_and_the_encrypted_one_is_encrypted(sqlite_run: Path) -> None:
    verification = json.loads((sqlite_run / "verification.json").read_text())["configs"]
    assert verification["sqlite-none"]["known_plaintext_hits"] > 0
    enc = verification["sqlite-sqlcipher-aes-256-cbc"]
    assert enc["marker_hits"] == 0 and enc["known_plaintext_hits"] == 0
    assert enc["answers"]["equal_to_plain"] is True
    manifest = json.loads((sqlite_run / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert all("storage_tables" in c for c in manifest["configs"])


def test_report_has_the_crud_table_and_the_cipher_floor(sqlite_run: Path) -> None:
    md = (sqlite_run / "report" / "summary.md").read_text()
    for text in ("## sqlite: CRUD operations, elapsed", "## sqlite: CRUD operations, MB/s",
                 "## sqlite: CRUD operations, server CPU", "## Cipher floor", "select_5000"):
        assert text in md, text


@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadbd is not installed")
def test_mariadb_tde_crud(tmp_path: Path) -> None:
    """docs/examples/crud-mariadb.toml (20000 rows, batches of 2000 and 5000; plain, AES-128-CBC and AES-256-CTR
    TDE), one trial: it runs as an example, and the TDE twins read the same bytes as the plain one."""
    out = tmp_path / "run"
    result = tdebench("run", str(ex.example("crud-mariadb")), "--trials", "1", "--warmup", "0", "--out", str(out),
                      "--data-dir", str(tmp_path / "data"))
    assert result.returncode == 0, result.stderr[-3000:]
    ex.check_example_run(out)
    rows = [r for r in ok_rows(out) if r["test"] == "crud" and r["metric"] == "bytes"]
    configs = {"mariadb-none", "mariadb-tde-aes-128-cbc", "mariadb-tde-aes-256-ctr"}
    assert {r["config"] for r in rows} == configs
    by = {(r["config"], r["step"]): float(r["value"]) for r in rows}
    for config in configs - {"mariadb-none"}:
        assert by[("mariadb-none", "select_5000")] == by[(config, "select_5000")] > 0, config
    manifest = json.loads((out / "manifest.json").read_text())
    tables = {c["label"]: c["storage_tables"]["tables"] for c in manifest["configs"]}
    assert tables["mariadb-none"]["persons"]["table_bytes"] > 0
