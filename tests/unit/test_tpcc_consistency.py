"""TPC-C consistency conditions 1-10 and 12 on SQLite (no server): they hold after New-Orders, Payments and
Deliveries, each one reports a damaged row (one damage per test, rolled back afterwards), and a trial that
leaves one broken fails."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from tdebench.api.dialect import SQLITE
from tdebench.encryption import PLAIN
from tdebench.engines import Config, get_engine
from tdebench.api.trial import Recorder
from tdebench.workloads.tpcc import schema
from tdebench.workloads.tpcc.consistency import CONDITIONS, MAX_EXAMPLES, check
from tdebench.workloads.tpcc.loader import load_tpcc
from tdebench.workloads.tpcc.rand import TpccRandom
from tdebench.workloads.tpcc.session import Session, knows_deleted_rows
from tdebench.workloads.tpcc.txns import (DELIVERY, NEW_ORDER, ORDER_STATUS, PAYMENT, STOCK_LEVEL, Inputs, Terminal,
                                          draw)
from tdebench.workloads.tpcc.vu import execute
from tdebench.workloads.tpcc.workload import check_consistency

NULL_DATE = schema.UNDELIVERED_DATE
DECK = [NEW_ORDER] * 40 + [PAYMENT] * 40 + [DELIVERY] * 15 + [ORDER_STATUS] * 3 + [STOCK_LEVEL] * 2


def _one(conn, sql: str):
    return conn.execute(sql).fetchone()[0]


@pytest.fixture(scope="module")
def worked(tmp_path_factory, tpcc_w1):
    """One warehouse loaded (the session's population), then 100 transactions (15 Deliveries) and 5 Payments
    across districts."""
    data_dir, _ = tpcc_w1
    engine = get_engine("sqlite")
    instance = engine.create_instance(Config("sqlite", PLAIN, engine.default_settings()),
                                      tmp_path_factory.mktemp("tpcc-sqlite"))
    instance.start()
    try:
        load_tpcc(instance, SQLITE, data_dir, 1)
        conn = instance.connect()
        before = {t: _one(conn, f"SELECT COUNT(*) FROM {t}") for t in ("orders", "new_order", "history")}
        conn.close()
        session = Session(instance.connect(), SQLITE)
        rng, terminal, outcomes = TpccRandom(11), Terminal(1, 1), []
        try:
            for kind in DECK:
                outcomes.append((kind, execute(session, terminal, draw(kind, rng, terminal), {}, 5)))
            for d_id in range(1, 6):  # a customer of another district pays: H_D_ID != H_C_D_ID
                x = Inputs(PAYMENT, d_id=d_id, c_w_id=1, c_d_id=d_id + 5, c_id=100 + d_id, amount=Decimal("12.34"))
                outcomes.append((PAYMENT, execute(session, terminal, x, {}, 5)))
        finally:
            session.close()
        yield instance, before, outcomes
    finally:
        instance.destroy()


def test_condition_10_sums_history_from_the_covering_history_index(worked):
    instance, _, _ = worked
    conn = instance.connect()
    try:
        assert _one(conn, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'history_customer'")
        plan = conn.execute("EXPLAIN QUERY PLAN SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) FROM history "
                            "GROUP BY h_c_w_id, h_c_d_id, h_c_id").fetchall()
    finally:
        conn.close()
    assert any("COVERING INDEX history_customer" in str(row[-1]) for row in plan), plan


def test_every_condition_holds_after_new_orders_payments_and_deliveries(worked):
    instance, before, outcomes = worked
    delivered = sum(1 for kind, (outcome, skipped) in outcomes if kind == DELIVERY and outcome == "commit")
    assert delivered == 15
    conn = instance.connect()
    try:
        after = {t: _one(conn, f"SELECT COUNT(*) FROM {t}") for t in ("orders", "new_order", "history")}
        new_orders = after["orders"] - before["orders"]
        # each Delivery took the oldest new order of all ten districts
        assert after["new_order"] == before["new_order"] + new_orders - 10 * delivered
        assert after["history"] == before["history"] + 45
        # what conditions 7, 10 and 12 are about: delivered lines with money, history across districts
        assert _one(conn, f"SELECT COUNT(*) FROM order_line WHERE ol_delivery_d <> '{NULL_DATE}' "
                          "AND ol_amount > 0") > 10 * delivered * 4
        assert _one(conn, "SELECT COUNT(*) FROM history WHERE h_d_id <> h_c_d_id") == 5
        assert _one(conn, "SELECT COUNT(*) FROM customer WHERE c_delivery_cnt > 0") >= 10 * delivered - 5
        found = check(conn)
    finally:
        conn.close()
    assert sorted(int(k.split("_")[1]) for k in found) == list(CONDITIONS)
    assert all(not v for v in found.values()), {k: v.examples for k, v in found.items() if v}


def _oldest_new_order(d_id: int) -> str:
    return f"(SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = 1 AND no_d_id = {d_id})"


def _delivered_order(d_id: int) -> str:
    return f"(SELECT MAX(o_id) FROM orders WHERE o_w_id = 1 AND o_d_id = {d_id} AND o_carrier_id <> 0)"


def _first_history_row(where: str) -> str:
    return f"rowid = (SELECT MIN(rowid) FROM history WHERE {where})"


DAMAGE = {
    "W_YTD raised": (["UPDATE warehouse SET w_ytd = w_ytd + 1"], {1, 8}),
    "D_NEXT_O_ID raised": (["UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_id = 1"], {2}),
    "a NEW-ORDER row in the middle deleted": (
        [f"DELETE FROM new_order WHERE no_d_id = 2 AND no_o_id = {_oldest_new_order(2)} + 5"], {3, 5}),
    "W_YTD and one D_YTD raised alike": (["UPDATE warehouse SET w_ytd = w_ytd + 1",
                                          "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_id = 1"], {8, 9}),
    "one D_YTD raised": (["UPDATE district SET d_ytd = d_ytd + 1 WHERE d_id = 1"], {1, 9}),
    "the oldest NEW-ORDER row of a district deleted": (
        [f"DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = {_oldest_new_order(4)}"], {5}),
    "the last delivered order back in NEW-ORDER (no gap: condition 3 holds)": (
        [f"INSERT INTO new_order VALUES (1, 4, {_delivered_order(4)})"], {5}),
    "one O_OL_CNT up, another down (district total unchanged)": (
        ["UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_d_id = 3 AND o_id = 10",
         "UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_d_id = 3 AND o_id = 11"], {6}),
    "every line of an order deleted": (["DELETE FROM order_line WHERE ol_d_id = 3 AND ol_o_id = 12"], {4, 6}),
    "a line whose order does not exist": (
        [f"INSERT INTO order_line VALUES (1, 3, 99999, 1, 5, 1, '{NULL_DATE}', 5, 1.0, '{'x' * 24}')"], {4, 7}),
    "a delivered line marked undelivered (its amount is 0.00)": (
        [f"UPDATE order_line SET ol_delivery_d = '{NULL_DATE}' WHERE ol_d_id = 5 AND ol_o_id = 20 "
         "AND ol_number = 1"], {7}),
    "an undelivered line given a delivery date": (
        ["UPDATE order_line SET ol_delivery_d = '2024-06-01 12:00:00' WHERE ol_d_id = 5 AND ol_number = 1 "
         f"AND ol_o_id = (SELECT MAX(no_o_id) FROM new_order WHERE no_d_id = 5)"], {7, 10, 12}),
    "an undelivered order given a carrier": (
        ["UPDATE orders SET o_carrier_id = 3 WHERE o_d_id = 6 "
         f"AND o_id = (SELECT MAX(no_o_id) FROM new_order WHERE no_d_id = 6)"], {5, 7}),
    "one history row counted for another district": (
        [f"UPDATE history SET h_d_id = 2 WHERE {_first_history_row('h_d_id = 1 AND h_c_d_id = 1')}"], {9}),
    "one history row counted for another customer": (
        [f"UPDATE history SET h_c_id = 2 WHERE {_first_history_row('h_c_d_id = 7 AND h_c_id = 1')}"], {10}),
    "one history amount raised": (
        [f"UPDATE history SET h_amount = h_amount + 1 WHERE {_first_history_row('h_c_d_id = 8')}"], {8, 9, 10}),
    "a balance moved into C_YTD_PAYMENT": (
        ["UPDATE customer SET c_balance = c_balance + 5, c_ytd_payment = c_ytd_payment - 5 "
         "WHERE c_d_id = 9 AND c_id = 9"], {10}),
    "a balance changed": (["UPDATE customer SET c_balance = c_balance - 0.01 WHERE c_d_id = 9 AND c_id = 10"],
                          {10, 12}),
    "C_YTD_PAYMENT changed": (["UPDATE customer SET c_ytd_payment = c_ytd_payment + 1 WHERE c_d_id = 2 AND c_id = 3"],
                              {12}),
}


def _damaged(instance, statements: list[str]):
    conn = instance.connect()
    try:
        conn.execute("BEGIN")
        for statement in statements:
            assert conn.execute(statement).rowcount >= 1, statement
        found = check(conn, commit=False)
        conn.execute("ROLLBACK")
    finally:
        conn.close()
    return found


@pytest.mark.parametrize("what", list(DAMAGE))
def test_a_damaged_row_violates_exactly_its_conditions(worked, what):
    instance, _, _ = worked
    statements, expected = DAMAGE[what]
    found = _damaged(instance, statements)
    assert {int(k.split("_")[1]) for k, v in found.items() if v} == expected, \
        {k: v.examples for k, v in found.items() if v}
    assert all(v.examples and len(v.examples) <= v.count for v in found.values() if v)


def test_every_checked_condition_has_a_damage_case():
    assert set().union(*(expected for _, expected in DAMAGE.values())) == set(CONDITIONS)


def test_violations_are_all_counted_but_only_the_first_few_described(worked):
    instance, _, _ = worked
    found = _damaged(instance, [f"UPDATE order_line SET ol_delivery_d = '{NULL_DATE}' "
                                "WHERE ol_d_id = 6 AND ol_o_id <= 100"])
    conn = instance.connect()
    try:
        lines = _one(conn, "SELECT COUNT(*) FROM order_line WHERE ol_d_id = 6 AND ol_o_id <= 100")
    finally:
        conn.close()
    assert found["condition_7"].count == lines > 500
    assert len(found["condition_7"].examples) == MAX_EXAMPLES
    assert found["condition_7"].summary().endswith(f"({lines} in all)")


def test_a_trial_that_breaks_a_condition_fails_and_records_every_count(worked):
    """Runs last: commits a damage, then undoes it."""
    instance, _, _ = worked
    rec = Recorder("run", 1, "sqlite-none", "sqlite", "none", workload="tpcc")
    assert check_consistency(instance, rec) == []
    damage = "UPDATE customer SET c_ytd_payment = c_ytd_payment {} 7 WHERE c_d_id = 4 AND c_id = 44"
    conn = instance.connect()
    try:
        conn.execute(damage.format("+"))
        conn.commit()
        failures = check_consistency(instance, rec)
    finally:
        conn.execute(damage.format("-"))
        conn.commit()
        conn.close()
    assert len(failures) == 1, failures
    assert failures[0].startswith("TPC-C consistency condition 12 violated: customer 1/4/44: C_BALANCE + "
                                  "C_YTD_PAYMENT ") and "!= delivered OL_AMOUNT" in failures[0]
    recorded = {(r.step, r.metric): r.value for r in rec.rows[len(CONDITIONS) + 1:]}
    assert recorded[("consistency", "condition_12_violations")] == 1
    assert sum(v for (_, m), v in recorded.items() if m.endswith("_violations")) == 1
    assert len(recorded) == len(CONDITIONS) + 1 and recorded[("consistency", "elapsed")] > 0
    assert check_consistency(instance, rec) == []


def test_delivery_without_a_rowcount_delivers_what_its_lock_holds(tmp_path, tpcc_w1):
    """libSQL's cursor.rowcount adds up the connection's changes (Dialect.rowcount False): Delivery still delivers
    the oldest new order of all ten districts, known by the lock its write transaction holds, and nothing else."""
    pytest.importorskip("libsql")
    engine = get_engine("libsql")
    assert not engine.dialect.rowcount and knows_deleted_rows(engine.dialect)
    assert not knows_deleted_rows(replace(SQLITE, rowcount=False, concurrent_writes=True))
    instance = engine.create_instance(Config("libsql", PLAIN, engine.default_settings()), tmp_path)
    instance.start()
    try:
        load_tpcc(instance, engine.dialect, tpcc_w1[0], 1)
        session = Session(instance.connect(), engine.dialect)
        try:
            pending = _one(session.conn, "SELECT COUNT(*) FROM new_order")
            x = draw(DELIVERY, TpccRandom(3), Terminal(1, 1))
            assert [execute(session, Terminal(1, 1), x, {}, 5) for _ in range(2)] == [("commit", 0)] * 2
            assert _one(session.conn, "SELECT COUNT(*) FROM new_order") == pending - 20
            assert _one(session.conn, f"SELECT COUNT(*) FROM orders WHERE o_carrier_id = "
                                      f"{schema.UNDELIVERED_CARRIER}") == pending - 20
            found = check(session.conn)
        finally:
            session.close()
    finally:
        instance.destroy()
    assert all(not v for v in found.values()), {k: v.examples for k, v in found.items() if v}
