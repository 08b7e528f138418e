"""`--workload sql` end to end with the worked example docs/examples/orders-sql: on SQLite through its experiment
file (in-process, fast), and the command of docs/workloads/sql.md on SQLite, MariaDB and PostgreSQL (each engine's
default encrypted spec) as a user types it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tests.e2e.examples import check_example_run, example

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_DIR = ROOT / "docs" / "examples" / "orders-sql"
MUST_SHOW = ["--workload", "sql", "--workload-dir", "docs/examples/orders-sql", "--engine", "sqlite,mariadb,postgres",
             "--encryption", "none,sqlcipher:aes-256-cbc,tde:aes-256-ctr,column:aes-256"]


def check_sql_run(out: Path, plain: list[str], encrypted: list[str]) -> None:
    """Completed; every encrypted twin's answers equal its plain twin's; the values sampled from the data are in
    the plain twins' files and in no encrypted twin's; the report has every config and the step table."""
    check_example_run(out)
    manifest = json.loads((out / "manifest.json").read_text())
    sampled = manifest["data"]["known_plaintext"]
    assert len(sampled) == 4 and all(len(v) >= 8 for v in sampled), sampled
    assert {c["label"] for c in manifest["configs"]} == set(plain) | set(encrypted)
    verification = json.loads((out / "verification.json").read_text())["configs"]
    for label in plain:
        hits = {v for f in verification[label]["known_plaintext"] for v in f["hits"]}
        assert verification[label]["passed"] and hits, (label, hits)
    for label in encrypted:
        entry = verification[label]
        assert entry["passed"] and entry["encrypted_on_disk"], label
        assert entry["known_plaintext_hits"] == 0 and entry["marker_hits"] == 0, (label, entry["files_with_hits"])
        assert entry["answers_equal"] is True and entry["answers"]["queries_answered"] == 5, entry["answers"]
    with open(out / "measurements.csv", newline="") as handle:
        text = handle.read()
    for step in ("q1_customer_orders", "q5_customer_search", "new_orders", "total"):
        assert f",sql,,{step},elapsed," in text, step
    html = (out / "report" / "index.html").read_text()
    assert "Your queries and writes" in html and all(label in html for label in [*plain, *encrypted])


@pytest.fixture(scope="module")
def orders_data(tmp_path_factory) -> Path:
    """One data directory for the module's runs: the example's generator runs once (the data of an unchanged
    workload directory are reused, as a user's second run reuses them)."""
    return tmp_path_factory.mktemp("orders-data")


def test_the_example_on_sqlite(tmp_path, monkeypatch, capfd, orders_data):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as info:
        main(["run", str(example("orders-sql")), "--out", str(out), "--data-dir", str(orders_data),
              "--work-dir", str(tmp_path / "work"), "--trials", "2", "--warmup", "0", "--duration", "20ms"])
    assert info.value.code == 0, capfd.readouterr().err[-3000:]
    check_example_run(out)
    check_sql_run(out, ["sqlite-none"], ["sqlite-sqlcipher-aes-256-cbc"])
    converted = json.loads((out / "manifest.json").read_text())["data"]["tables"]
    assert {t: v["rows"] for t, v in converted.items()} == {"customers": 300, "products": 20, "orders": 8000,
                                                          "order_lines": 23990}
    assert not list(EXAMPLE_DIR.rglob("*.tbl")), "the run wrote into the example directory"


@pytest.mark.server
@pytest.mark.skipif(not (shutil.which("mariadbd") or Path("/usr/sbin/mariadbd").exists()) or
                    not (shutil.which("pg_ctl") or list(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))),
                    reason="needs mariadbd and PostgreSQL (Debian packages mariadb-server, postgresql)")
def test_the_command_of_the_docs_on_three_engines(tmp_path, orders_data):
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    # the docs' command in two blocks of 20-ms visits, no warm-up (its defaults: 10 blocks of 500 ms after one;
    # the same code: the checks read the verification, the steps' rows and the report, not the figures). Every
    # config runs a statement as often as the first did in its visit (SQLite, the fastest here): the other
    # engines' visits last many times longer, and that is where the run's time goes
    done = subprocess.run([sys.executable, "-m", "tdebench", "run", *MUST_SHOW, "--trials", "2", "--warmup", "0",
                           "--duration", "20ms", "--out", str(out),
                           "--data-dir", str(orders_data), "--work-dir", str(tmp_path / "work")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    check_sql_run(out, ["sqlite-none", "mariadb-none", "postgres-none"],
                  ["sqlite-sqlcipher-aes-256-cbc", "mariadb-tde-aes-256-ctr", "postgres-column-aes-256"])
    assert "docs/workloads/sql.md" not in done.stderr
