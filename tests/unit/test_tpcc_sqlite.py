"""TPC-C on SQLite (no server): load, each transaction, a short VU step, consistency after each.

Each consistency condition catching its damaged row: test_tpcc_consistency.py.
"""

from __future__ import annotations

import csv

import pytest

from tdebench.api.dialect import SQLITE
from tdebench.encryption import PLAIN
from tdebench.engines import Config, get_engine
from tdebench.workloads.tpcc.consistency import check_instance
from tdebench.workloads.tpcc.driver import run_step
from tdebench.workloads.tpcc.loader import load_tpcc
from tdebench.workloads.tpcc.options import parse_options
from tdebench.workloads.tpcc.smoke import data_digest, smoke_test


@pytest.fixture(scope="module")
def loaded(tmp_path_factory, tpcc_w1):
    data_dir, facts = tpcc_w1  # the session's 1-warehouse population (shared with the e2e tpcc runs)
    engine = get_engine("sqlite")
    instance = engine.create_instance(Config("sqlite", PLAIN, engine.default_settings()),
                                      tmp_path_factory.mktemp("tpcc-sqlite"))
    instance.start()
    result = load_tpcc(instance, SQLITE, data_dir, 1)
    yield instance, result, facts
    instance.destroy()


def test_load_matches_the_generated_rows(loaded):
    instance, result, facts = loaded
    assert {t: rows for t, (rows, _) in result.tables.items()} == facts["rows"]
    assert facts["rows"]["stock"] == 100_000 and facts["rows"]["customer"] == 30_000
    assert all(not problems for problems in check_instance(instance).values())


def test_every_transaction_runs_and_new_order_rolls_back(loaded):
    instance, _, _ = loaded
    opts = parse_options({})
    conn = instance.connect()
    before = data_digest(conn)
    conn.close()
    assert smoke_test(instance, SQLITE, opts) == []
    conn = instance.connect()
    after = data_digest(conn)
    conn.close()
    assert after["orders.rows"] == before["orders.rows"] + 1  # one New-Order committed, one rolled back
    assert after["history.rows"] == before["history.rows"] + 1
    assert after["new_order.rows"] == before["new_order.rows"] + 1 - 10  # Delivery took one per district
    assert all(not problems for problems in check_instance(instance).values())


def test_a_short_step_with_two_virtual_users(loaded, tmp_path):
    instance, _, _ = loaded
    opts = parse_options({"vus": "2", "duration": "2s", "rampup": "0.5s"})
    marks: list[str | None] = []
    step = run_step(instance, SQLITE, opts, 2, seed=5, mark=marks.append)
    assert step.failures == [] and step.committed > 20
    assert 0.25 < step.nopm / step.tpm < 0.65
    assert step.latency["new_order"].percentile(99) >= step.latency["new_order"].percentile(50) > 0
    assert "vu2" in marks and marks[-1] is None
    path = step.write_series(tmp_path / "s.csv", opts.rampup)
    rows = list(csv.DictReader(path.open()))
    assert rows[0]["phase"] == "rampup" and rows[-1]["phase"] == "measured"
    assert sum(int(r["committed"]) for r in rows) >= step.committed
    assert all(not problems for problems in check_instance(instance).values())
