"""Runner behaviour end to end on SQLite: examples, throughput+refresh, timeouts. Resume, faults, abandoning and
the block order are tested in-process on the fake engine (tests/unit/test_runner_fake.py); SIGKILL and resume of a
real run by tests/e2e/test_interrupt.py."""

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

pytestmark = pytest.mark.slow(seconds=150)  # a measured run of the whole module, loaded machine

ROOT = Path(__file__).resolve().parents[2]
# the examples run here; the others are run (and checked as examples too) by their workload's e2e test
EXAMPLES = [e for e in ex.EXAMPLES if e.stem not in ex.RUN_BY_OTHER_TESTS]
#: examples run smaller (the file is validated whole first): three of the five TDE configs, the shortest key and
#: the other mode beside the plain twin, prove the file runs at a third of the time; the CRUD example's three
#: configs on a quarter of its rows, in batches of a fifth
RESIZED = {"mariadb-key-lengths": {"encryption": ["none", "tde:aes-128-ctr", "tde:aes-256-cbc"]},
           "crud-postgres-3des": {"rows": 5000, "batches": [1000]}}


def tdebench(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True, env=env,
                          timeout=900, **kw)


def rows(run: Path) -> list[dict[str, str]]:
    with open(run / "measurements.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def _needs(example: Path) -> list[str]:
    text = example.read_text()
    return [name for name in ("mariadb", "postgres") if f'name = "{name}"' in text]


def _is_tpch(example: Path) -> bool:
    import tomllib

    return tomllib.loads(example.read_text()).get("run", {}).get("workload", "tpch") == "tpch"


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_examples_run(example, tmp_path, tpch_sf001):
    missing = [n for n in _needs(example) if not shutil.which({"mariadb": "mariadbd", "postgres": "pg_ctl"}[n])
               and not Path("/usr/sbin/mariadbd").exists()]
    if missing:
        pytest.skip(f"needs {missing}")
    out = tmp_path / "run"
    if example.stem in RESIZED:
        example = ex.sized_copy(example, tmp_path, **RESIZED[example.stem])
    # one measured trial, no warm-up: the test proves the example runs, not what it measures; TPC-H examples answer
    # queries 1 and 18 (every engine's 22 answers are the conformance kit's, sqlite-full-tpch's run below has them)
    queries = ["--workload-option", "queries=1,18"] if _is_tpch(example) else []
    result = tdebench("run", str(example), "--out", str(out), "--data-dir", str(Path(tpch_sf001[0]).parent),
                      "--trials", "1", "--warmup", "0", *queries)
    assert result.returncode == 0, result.stderr[-3000:]
    ex.check_example_run(out)


def test_every_example_is_run_end_to_end():
    """Each docs/examples file is run here or by the test named in tests/e2e/examples.py, which runs it."""
    import importlib
    import inspect
    import re

    assert ex.EXAMPLES
    for stem, (module, function) in ex.RUN_BY_OTHER_TESTS.items():
        assert ex.example(stem) in ex.EXAMPLES
        source = inspect.getsource(importlib.import_module(module))
        body = re.search(rf"^def {function}\(.*?(?=^\S)", source + "\nend", re.S | re.M)
        assert body, f"{module} has no function {function} to run {stem}"
        assert f'example("{stem}")' in body[0] and "check_example_run" in body[0], f"{module}.{function} ({stem})"


def test_throughput_and_refresh_metrics(tmp_path, tpch_sf001):
    """docs/examples/sqlite-full-tpch.toml as shipped but for its warm-up (power and two throughput streams, two
    blocks): every stream's queries and refresh functions in both blocks, each block's refresh sets new orders."""
    out = tmp_path / "run"
    # blocks 1 and 2 are checked; a warm-up block would add nothing the checks look at
    result = tdebench("run", str(ex.example("sqlite-full-tpch")), "--trials", "2", "--warmup", "0",
                      "--out", str(out), "--data-dir", str(Path(tpch_sf001[0]).parent))
    assert result.returncode == 0, result.stderr[-3000:]
    ex.check_example_run(out)
    data = [r for r in rows(out) if r["status"] == "ok"]
    for label in ("sqlite-none", "sqlite-sqlcipher-aes-256-cbc"):
        for block in ("1", "2"):
            mine = [r for r in data if r["config"] == label and r["block"] == block]
            for test, stream in (("power", "0"), ("throughput", "1"), ("throughput", "2")):
                steps = {r["step"] for r in mine if r["test"] == test and r["stream"] == stream}
                assert {f"q{n:02d}" for n in range(1, 23)} <= steps, (label, block, test, stream)
            steps = {r["step"] for r in mine}
            assert {"rf1", "rf2", "rf1_1", "rf2_1", "rf1_2", "rf2_2", "power_at_size", "throughput_at_size",
                    "qphh_at_size", "orders_rows", "lineitem_rows"} <= steps
            orders = next(r for r in mine if r["step"] == "orders_rows")
            assert float(orders["value"]) == 15000  # RF1 and RF2 move the same number of orders
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["plan"]["workload_options"]["streams"] == 2
    assert manifest["plan"]["workload_plan"]["streams"] == 2 and "never reused" in manifest["plan"]["workload_plan"]["refresh"]


def test_query_timeout_is_recorded(tmp_path, tpch_sf001):
    """Timed-out queries are recorded as such, and so are the resources of the trial they failed: the
    server CPU/IO of a failed trial never passes for that of a completed one."""
    from tdebench.stats.load import load_measurements

    out = tmp_path / "run"
    result = tdebench("run", "--encryption", "sqlcipher:aes-256-cbc", "--trials", "1", "--warmup", "0",
                      "--query-timeout", "0.001", "--max-failures", "1", "--out", str(out), "--no-report",
                      "--data-dir", str(Path(tpch_sf001[0]).parent))
    assert result.returncode == 1
    timed_out = [r for r in rows(out) if r["status"] == "timeout" and r["test"] not in ("resources", "counters")]
    elapsed = [r for r in timed_out if r["metric"] == "elapsed"]  # the CPU rows of its steps carry the status too
    assert elapsed and all(float(r["value"]) == 0.001 for r in elapsed)
    assert "ABANDONED" in result.stderr and "timed out" in result.stderr
    resources = [r for r in rows(out) if r["test"] == "resources"]
    assert {r["step"] for r in resources} >= {"trial", "q01"}
    assert {r["status"] for r in resources} == {"timeout"}, {(r["step"], r["status"]) for r in resources}
    assert not [k for k in load_measurements(out).series if k.test == "resources"]
