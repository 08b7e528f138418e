"""The conformance kit every registered workload passes, applied automatically: parametrized over
``tdebench.workloads.workload_names()`` (plus the minimal example of docs/adding-a-workload.md), so a new
workload that does not pass fails the suite.

Every workload: an options model that refuses unknown keys; a database name, a one-line describe(), tables()
known before any work; and one short run (1 trial, no warm-up) in-process through the orchestrator on the fake
engine (plain and encrypted twin) and, separately, on SQLite (SQLCipher): the run completes, encryption is verified, the
answers of the twins agree, and the tables the workload creates are those tables() names. A workload that
cannot run on an engine must refuse it before any work with a one-line UsageError (sysbench: servers only).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tdebench.api.engine import Config
from tdebench.api.plan import RunPlan
from tdebench.api.tables import TableSpec, parse_type
from tdebench.encryption import parse_spec
from tdebench.errors import UsageError
from tdebench.results.rundir import RunDirectory
from tdebench.runner.orchestrator import Orchestrator
from tdebench.workloads import make_workload, options_model, workload_names
from tdebench.workloads.options import WorkloadOptions
from tests.fakes import engine as fake_engine
from tests.fakes import examples
from tests.sqlworkload import make_workload_dir

NAMES = [*workload_names(), "minimal"]
# the smallest options that still exercise each workload (a new workload adds its entry here)
KIT_OPTIONS: dict[str, dict[str, Any]] = {
    "tpch": {"sf": 0.01, "tests": "power"},
    "tpcc": {"warehouses": 1, "vus": "2", "duration": 1, "rampup": 0},
    "sysbench": {"tables": 1, "table_size": 100, "duration": 1, "rampup": 0},
    "crud": {"rows": 3000, "batches": "500"},
    "backup": {"sf": 0.01, "kinds": "sqlite-backup-api", "compression": "none"},
    "load": {"sf": 0.01, "variants": "bulk,insert_keys", "batch_rows": 5000},
    "encrypt": {"warehouses": 1, "steady": 1, "rampup": 0},  # refuses the fake engine and SQLite (no online switch)
    "sql": {},  # the tiny shop of tests/sqlworkload.py, made per test
    "replay": {"speed": "max"},  # the tiny shop and a PostgreSQL log of two sessions on it, made per test
    "minimal": {"rows": 2000},
}
REPLAY_LOG = (
    "2024-11-26 23:45:01.123 UTC [1234] LOG:  duration: 0.123 ms  statement: SELECT name FROM customers WHERE city = "
    "'Walworth Village'\n"
    "2024-11-26 23:45:01.200 UTC [1234] LOG:  duration: 0.200 ms  statement: SELECT COUNT(*) FROM orders WHERE "
    "customer_id = 1\n"
    "2024-11-26 23:45:01.300 UTC [1235] LOG:  duration: 0.100 ms  statement: INSERT INTO orders (id, customer_id, "
    "placed, amount, paid) VALUES (500, 1, '2024-03-01', 2.5, true)\n"
    # a new customer and an order that references it: undone child first, or a server's foreign key refuses
    "2024-11-26 23:45:01.400 UTC [1236] LOG:  duration: 0.100 ms  statement: INSERT INTO customers (id, name, city) "
    "VALUES (600, 'Ada Lovelace', 'Marylebone')\n"
    "2024-11-26 23:45:01.500 UTC [1236] LOG:  duration: 0.100 ms  statement: INSERT INTO orders (id, customer_id, "
    "placed, amount, paid) VALUES (601, 600, '2024-03-02', 3.5, false)\n")
# per engine: the configs of the short run (SQLite: the encrypted one only, its plain twin is the e2e tests')
CONFIGS = {"fake": [("fake", "none"), ("fake", "tde:aes-256-ctr")], "sqlite": [("sqlite", "sqlcipher:aes-256-cbc")]}
IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# (workload, engine) runs another test makes through the CLI already (its documented example): not again here
COVERED_ELSEWHERE = {
    ("tpch", "sqlite"): "tests/e2e/test_run_sqlite.py::test_no_argument_run_is_sqlite_vs_sqlcipher",
    ("tpcc", "sqlite"): "tests/e2e/test_tpcc_e2e.py::test_sqlite",
    ("load", "sqlite"): "tests/e2e/test_bulkload.py::test_client_and_bulk_loads_per_table",
}


@pytest.fixture(autouse=True)
def _registered(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    with fake_engine.registered(), examples.minimal_workload():
        yield


def kit_options(name: str, tmp_path: Path) -> dict[str, Any]:
    assert name in KIT_OPTIONS, f"workload {name} has no small options for the kit: add them to KIT_OPTIONS"
    options = dict(KIT_OPTIONS[name])
    if name in ("sql", "replay"):
        options["dir"] = str(make_workload_dir(tmp_path / "shop"))
    if name == "replay":
        log = tmp_path / "shop.log"
        log.write_text(REPLAY_LOG)
        options["log"] = str(log)
    return options


def plan_for(name: str, options: dict[str, Any], data_root: Path, configs=CONFIGS["fake"]) -> RunPlan:
    return RunPlan(configs=[Config(e, parse_spec(s)) for e, s in configs], trials=1, warmup_trials=0, seed=3,
                   workload=name, workload_options=options, data_dir=data_root)


def test_the_kit_covers_every_registered_workload():
    assert set(workload_names()) <= set(KIT_OPTIONS), "give every workload small options in KIT_OPTIONS"
    root = Path(__file__).resolve().parents[2]
    for where in COVERED_ELSEWHERE.values():
        path, _, function = where.partition("::")
        assert f"def {function}(" in (root / path).read_text(), f"{where} is gone: run it in the kit again"


@pytest.mark.parametrize("name", NAMES)
def test_options_model_refuses_unknown_keys(name):
    model = options_model(name)
    assert issubclass(model, WorkloadOptions) and model.model_config.get("extra") == "forbid"
    assert model.workload_name == name
    with pytest.raises(UsageError) as info:
        model.parse({"no_such_option": 1})
    assert "no_such_option" in info.value.one_line() and name in info.value.one_line()
    assert "\n" not in info.value.one_line() and info.value.fix


@pytest.mark.parametrize("name", NAMES)
def test_declares_its_database_description_and_tables(name, tmp_path, data_root):
    plan = plan_for(name, kit_options(name, tmp_path), data_root)
    workload = make_workload(plan, RunDirectory.create(tmp_path / "run"))
    assert workload.name == name and IDENTIFIER.match(workload.database), workload.database
    line = workload.describe()
    assert line.strip() and "\n" not in line
    tables = workload.tables()
    assert all(isinstance(t, TableSpec) for t in tables)
    assert len({t.name for t in tables}) == len(tables)
    for table in tables:
        assert table.columns and set(table.key_columns) <= set(table.column_names), table.name
        for column in table.columns:
            parse_type(column.type)
    json.dumps(workload.plan_json())
    size = workload.estimated_input_bytes()
    assert size is None or size >= 0


def _created_tables(state) -> set[str]:
    conn = state.instance.connect()
    try:
        cur = conn.cursor()
        cur.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        return {str(r[0]).lower() for r in cur.fetchall()} - {"sqlite_stat1", "sqlite_stat4", "sqlite_sequence"}
    finally:
        conn.close()


@pytest.mark.parametrize("engine", sorted(CONFIGS))
@pytest.mark.parametrize("name", NAMES)
def test_one_short_run(name, engine, tmp_path, data_root, request):
    if (name, engine) in COVERED_ELSEWHERE:
        pytest.skip(f"run by {COVERED_ELSEWHERE[(name, engine)]}")
    if name in ("tpch", "backup", "load"):
        request.getfixturevalue("tpch_sf001")  # generated once per session into data_root
    if name == "tpcc":
        request.getfixturevalue("tpcc_w1")
    plan = plan_for(name, kit_options(name, tmp_path), data_root, CONFIGS[engine])
    orchestrator = Orchestrator(plan, RunDirectory.create(tmp_path / "run"), work_root=tmp_path / "work")
    created: dict[str, set[str]] = {}
    load = orchestrator.workload.load

    def load_and_look(state, rec, ui):
        facts = load(state, rec, ui)
        created[state.label] = _created_tables(state)
        return facts

    orchestrator.workload.load = load_and_look  # type: ignore[method-assign]
    try:
        outcome = orchestrator.execute()
    except UsageError as exc:  # a workload that cannot run here says so before any work
        assert "\n" not in exc.one_line() and exc.fix and not created
        pytest.skip(f"{name} refuses these engines: {exc.one_line()}")
    assert outcome.ok, (outcome.failed_steps, outcome.problems, outcome.abandoned)
    run = orchestrator.rundir.path
    assert json.loads((run / "manifest.json").read_text())["status"] == "completed"
    verification = json.loads((run / "verification.json").read_text())["configs"]
    assert all(v["passed"] for v in verification.values()), verification
    assert all(v.get("answers_equal") is not False for v in verification.values()), verification
    with open(run / "measurements.csv", newline="") as handle:
        markers = [(r["block"], r["config"]) for r in csv.DictReader(handle)
                   if r["test"] == "trial" and float(r["value"]) == 1]
    assert sorted(markers) == sorted(("1", c.label) for c in plan.configs)
    names = {t.name for t in orchestrator.workload.tables()} or set(orchestrator.workload.schema_tables)
    for label, found in created.items():
        assert names <= found, f"{label}: tables() names {sorted(names - found)}, which the load did not create"
        extra = found - names - {"tdebench_canary"}
        assert not extra, f"{label}: the load created {sorted(extra)}, which tables() does not name"

