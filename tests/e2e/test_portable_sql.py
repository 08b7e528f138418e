"""Portable statements: docs/examples/billing-sql, written in standard SQL (EXTRACT, DATE
literals, interval arithmetic, CAST, COALESCE) without a single variant file, runs on SQLite, MariaDB and
PostgreSQL with equal answers across the three; a statement one engine of the plan cannot run is refused in one
line (file, engine, fix) before any data is loaded into any instance."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tdebench.workloads.sql import answer_check as answers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "billing-sql"
QUERIES = sorted(p.stem for p in (EXAMPLE / "queries").glob("*.sql"))
ENGINES = ["sqlite", "mariadb", "postgres"]

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(not (shutil.which("mariadbd") or Path("/usr/sbin/mariadbd").exists()) or
                       not (shutil.which("pg_ctl") or list(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))),
                       reason="needs mariadbd and PostgreSQL (Debian packages mariadb-server, postgresql)"),
]


def run(tmp_path: Path, workload: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(tmp_path / "state")}
    return subprocess.run([sys.executable, "-m", "tdebench", "run", "--workload", "sql", "--workload-dir",
                           str(workload), "--engine", ",".join(ENGINES), "--encryption", "none", "--trials", "1",
                           "--warmup", "0", "--duration", "20ms", "--out", str(tmp_path / "out"),
                           "--data-dir", str(tmp_path / "data"),
                           "--work-dir", str(tmp_path / "work"), *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def kept_answer(out: Path, engine: str, query: str) -> list[list[str]]:
    with open(out / "answers" / f"{engine}-none" / f"{query}.csv", newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    return answers.normalize(rows)


def test_standard_sql_runs_on_three_engines_with_equal_answers(tmp_path):
    done = run(tmp_path, EXAMPLE, "--keep-answers", "--no-report")  # the answers are checked, not the report
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out"
    assert not [p for p in (EXAMPLE / "queries").iterdir() if p.name.count(".") > 1], "the example has variants"
    for query in QUERIES:
        reference = kept_answer(out, "postgres", query)
        assert reference, query
        for engine in ("sqlite", "mariadb"):
            assert answers.compare(query, reference, kept_answer(out, engine, query)) == [], (engine, query)
    with open(out / "measurements.csv", newline="") as handle:
        failed = [r for r in csv.DictReader(handle) if r.get("status") not in ("", None, "ok")]
    assert not failed, failed[:3]


def test_a_statement_one_engine_cannot_run_is_refused_before_the_load(tmp_path):
    workload = tmp_path / "billing"
    shutil.copytree(EXAMPLE, workload)
    # INSTR: SQLite has it, MariaDB gets LOCATE from sqlglot, PostgreSQL (the last engine) has no such function
    (workload / "queries" / "q6_studios.sql").write_text("SELECT account_id, instr(name, 'Studio') AS at\n"
                                                         "FROM accounts ORDER BY account_id\n")
    done = run(tmp_path, workload)
    lines = [line for line in done.stderr.splitlines() if line.startswith("tdebench: error:")]
    assert done.returncode == 2, done.stderr[-3000:]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    line = lines[0]
    assert "queries/q6_studios.sql: PostgreSQL (postgres-none) cannot run it" in line and "instr" in line, line
    assert "fix: write the postgres text as a variant, queries/q6_studios.postgres.sql" in line, line
    measurements = (tmp_path / "out" / "measurements.csv")
    assert not measurements.exists() or ",load," not in measurements.read_text(), "data was loaded"
