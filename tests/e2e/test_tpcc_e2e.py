"""End to end: `tdebench run --workload tpcc` on SQLite (always), MariaDB and PostgreSQL (when installed).

The SQLite and MariaDB runs are those of docs/examples/tpcc-sqlite.toml and tpcc-mariadb.toml (with shorter
steps): one run checks both the workload and the example (test_runner.py runs the other examples).
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tdebench.encryption import issued_secrets
from tdebench.workloads.tpcc.consistency import CONDITIONS
from tests.e2e import examples as ex
from tests.resultdoc import undocumented

pytestmark = pytest.mark.slow(seconds=260)  # a measured run of the whole module, loaded machine

HAVE_MARIADB = Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd") is not None
HAVE_POSTGRES = any(Path("/usr/lib/postgresql").glob("*/bin/postgres")) or shutil.which("postgres") is not None
KINDS = ("new_order", "payment", "order_status", "delivery", "stock_level")


@pytest.fixture(scope="module")
def data(tpcc_w1) -> Path:
    """The data directory holding the session's TPC-C population (1 warehouse), for every test of the module."""
    return tpcc_w1[0].parent


def run_tpcc(out: Path, data: Path, engine: str, encryption: str, vus: str, *extra: str) -> None:
    with pytest.raises(SystemExit) as code:
        main(["run", "--engine", engine, "--encryption", encryption, "--workload", "tpcc", "--warehouses", "1",
              "--vus", vus, "--duration", "2s", "--rampup", "1s", "--trials", "1", "--warmup", "0",
              "--out", str(out), "--data-dir", str(data), *extra])
    assert code.value.code == 0, (out / "manifest.json").read_text() if (out / "manifest.json").exists() else ""


def run_example(out: Path, data: Path, example: Path, duration: str = "2s") -> None:
    """An example file with steps of ``duration`` after 1 s of ramp-up (as run_tpcc), 1 trial, no warm-up."""
    sized = ex.sized_copy(example, out.parent, duration=duration, rampup="1s")
    with pytest.raises(SystemExit) as code:
        main(["run", str(sized), "--trials", "1", "--warmup", "0", "--out", str(out), "--data-dir", str(data)])
    assert code.value.code == 0, (out / "manifest.json").read_text() if (out / "manifest.json").exists() else ""


def ok_rows(run: Path) -> list[dict[str, str]]:
    with open(run / "measurements.csv", newline="") as handle:
        return [r for r in csv.DictReader(handle) if r["status"] == "ok" and r["workload"] == "tpcc"]


def value(rows: list[dict[str, str]], config: str, step: str, metric: str) -> float:
    """The one figure of a step (block schedule) or of its first round (interleaved: 1-s slices)."""
    found = [float(r["value"]) for r in rows if (r["config"], r["step"], r["metric"]) == (config, step, metric)
             and r.get("round", "") in ("", "1")]
    assert len(found) == 1, (config, step, metric, found)
    return found[0]


def check_trial(run: Path, configs: list[str], vus: list[int]) -> list[dict[str, str]]:
    """Throughput, mix, latencies, retry counters and consistency of every config and step."""
    rows = ok_rows(run)
    for config in configs:
        for n in vus:
            tpm, nopm = value(rows, config, f"vu{n}", "tpm"), value(rows, config, f"vu{n}", "nopm")
            assert tpm > 0 and 0.25 < nopm / tpm < 0.65, (config, n, tpm, nopm)
            assert value(rows, config, f"vu{n}.all", "errors") == 0
            assert value(rows, config, f"vu{n}", "server_cpu_per_txn") > 0
            for metric in ("deadlocks", "serialization_failures", "retries", "rolled_back"):
                value(rows, config, f"vu{n}.all", metric)
            for kind in ("new_order", "payment"):
                p50 = value(rows, config, f"vu{n}.{kind}", "latency_p50")
                assert 0 < p50 <= value(rows, config, f"vu{n}.{kind}", "latency_p99")
            series = run / "samples" / config / f"tpcc-block001-vu{n}.csv"  # the block schedule
            slices = run / "samples" / config / f"tpcc-block001-vu{n}-slices.csv"  # the interleaved one
            assert (series.is_file() and "measured" in series.read_text()) or (
                slices.is_file() and slices.read_text().startswith("round,second,"))
        assert sum(value(rows, config, f"vu{n}.delivery", "count") for n in vus) > 0
        for condition in CONDITIONS:  # hold after the trial's Deliveries and Payments
            assert value(rows, config, "consistency", f"condition_{condition}_violations") == 0
        assert value(rows, config, "consistency", "elapsed") > 0
    return rows


def check_common(run: Path, configs: list[str], report: bool = True) -> dict:
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "completed" and not manifest.get("failed_steps")
    assert undocumented(run) == []  # every file and CSV column is in docs/result-format.md
    verification = json.loads((run / "verification.json").read_text())["configs"]
    for config in configs:
        assert verification[config]["passed"] is True
        if "none" not in config:
            assert verification[config]["answers"]["equal_to_plain"] is True
    if report:
        html = (run / "report" / "index.html").read_text()
        assert "TPM vs virtual users" in html and "NOPM vs virtual users" in html
        assert 'id="consistency"' in html and "held in 1 of 1 trials" in html
    secrets_ = [s for s in issued_secrets() if len(s) >= 16]
    for path in run.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(s.encode() in data for s in secrets_), f"secret in {path}"
    return manifest


def test_sqlite(tmp_path, data):
    """docs/examples/tpcc-sqlite.toml: SQLite vs SQLCipher, 1 warehouse, 1 then 2 virtual users."""
    configs = ["sqlite-none", "sqlite-sqlcipher-aes-256-cbc"]
    run_example(tmp_path / "run", data, ex.example("tpcc-sqlite"))
    ex.check_example_run(tmp_path / "run")
    check_trial(tmp_path / "run", configs, [1, 2])
    manifest = check_common(tmp_path / "run", configs)
    entries = {c["label"]: c for c in manifest["configs"]}
    assert entries["sqlite-none"]["tpcc_mode"] == "statements"
    assert "single writer" in entries["sqlite-none"]["tpcc_note"]
    assert {f"vu{n}" for n in (1, 2)} <= {r["step"] for r in ok_rows(tmp_path / "run") if r["test"] == "resources"}


@pytest.fixture(scope="module")
def mariadb_run(tmp_path_factory, data) -> Path:
    """docs/examples/tpcc-mariadb.toml with 3-s steps: 3 rounds of 1-s slices per step (the default schedule with
    a warm cache is the interleaved one), read by both MariaDB tests."""
    if not HAVE_MARIADB:
        pytest.skip("mariadbd is not installed (Debian package mariadb-server)")
    run = tmp_path_factory.mktemp("tpcc-mariadb") / "run"
    run_example(run, data, ex.example("tpcc-mariadb"), duration="3s")
    ex.check_example_run(run)
    return run


@pytest.mark.server
def test_mariadb(mariadb_run):
    """docs/examples/tpcc-mariadb.toml: plain vs InnoDB TDE (AES-256-CTR), 1 then 2 virtual users."""
    configs = ["mariadb-none", "mariadb-tde-aes-256-ctr"]
    check_trial(mariadb_run, configs, [1, 2])
    manifest = check_common(mariadb_run, configs)
    assert {c["tpcc_mode"] for c in manifest["configs"]} == {"procedures"}


@pytest.mark.heavy  # TPC-C on PostgreSQL in the default suite: tests/engines/test_matrix.py; pgcrypto: test_encrypt_offline
@pytest.mark.server
@pytest.mark.skipif(not HAVE_POSTGRES, reason="PostgreSQL is not installed (Debian package postgresql)")
def test_postgres_with_column_encryption(tmp_path, data):
    configs = ["postgres-none", "postgres-column-aes-256"]
    run_tpcc(tmp_path / "run", data, "postgres", "none,column:aes-256", "2", "--no-report", "--schedule", "block")
    check_trial(tmp_path / "run", configs, [2])
    manifest = check_common(tmp_path / "run", configs, report=False)
    column = next(c for c in manifest["configs"] if c["label"] == "postgres-column-aes-256")
    views = column["settings"]["column_encryption"]["updatable_views"]
    assert "customer" in views and "stock" in views
    status = json.loads((tmp_path / "run" / "verification.json").read_text())["configs"][configs[1]]["status"]
    assert "c_balance" in status["encrypted_columns"]["customer"] and "s_data" in status["encrypted_columns"]["stock"]


@pytest.mark.server
def test_mariadb_interleaved_slices(mariadb_run):
    """The interleaved schedule: persistent virtual users, 1-s slices alternating between the twins, one paired
    observation per round, the engine's write counters per transaction beside them."""
    configs = ["mariadb-none", "mariadb-tde-aes-256-ctr"]
    run = mariadb_run
    manifest = check_common(run, configs)
    schedule = manifest["schedule"]
    assert schedule["effective"] == "query" and schedule["slice_s"] == 1.0 and schedule["rounds_per_step"] == 3
    assert schedule["warmup_rounds_per_step"] == 3  # a 3-s step is shorter than the 30-s warm-up
    assert len(schedule["orders"]["1"]) == 2 * 3  # one order per round, of both steps (1 and 2 virtual users)
    rows = ok_rows(run)
    for config in configs:
        tpm = {r["round"]: float(r["value"]) for r in rows if (r["config"], r["step"], r["metric"]) ==
               (config, "vu2", "tpm")}
        assert sorted(tpm) == ["1", "2", "3"] and all(v > 0 for v in tpm.values()), tpm
        paused = [r for r in rows
                  if (r["config"], r["step"], r["metric"]) == (config, "vu2.all", "server_cpu_while_paused")]
        assert sorted(r["round"] for r in paused) == ["2", "3"]  # the first slice follows the ramp-up
        assert all(float(r["value"]) >= 0 for r in paused)
    per_txn = {(r["config"], r["metric"]): float(r["value"]) for r in rows if r["step"] == "vu2.per_txn"}
    assert per_txn[(configs[0], "log_bytes")] > 0 and per_txn[(configs[1], "log_bytes")] > 0
    assert per_txn[(configs[1], "bytes_encrypted")] > 0 == per_txn[(configs[0], "bytes_encrypted")]
    with open(run / "report" / "overhead.csv", newline="") as handle:
        head = next(r for r in csv.DictReader(handle) if (r["step"], r["metric"]) == ("vu2", "tpm"))
    assert head["pairing_unit"] == "round" and head["n"] == "3" and head["ci_method"] == "t-log-ar1-paired"
