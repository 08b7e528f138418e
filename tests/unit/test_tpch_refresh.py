"""TPC-H refresh functions: generated update sets follow dbgen's keys and the spec's column rules, and RF1/RF2
applied to real SQLite and SQLCipher databases leave the row counts the spec predicts."""

from __future__ import annotations

import hashlib
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from tdebench.api.dialect import MARIADB, POSTGRES, SQLITE
from tdebench.encryption import parse_spec
from tdebench.engines import Config, get_engine
from tdebench.errors import EnvironmentProblem, UsageError
from tdebench.workloads.tpch import refresh as rf
from tdebench.workloads.tpch.answers import read_answer_csv, reference_dir
from tdebench.workloads.tpch.loader import load_tpch
from tdebench.workloads.tpch.params import QUERY_NUMBERS, render_query

SF = 0.01
SETS = (1, 2, 3)


def read_tbl(path, columns=None):
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.rstrip("\n").split("|")
            yield fields if columns is None else [fields[i] for i in columns]


@pytest.fixture(scope="module")
def data_dir(request):
    """The session's SF 0.01 data (read only here)."""
    try:
        folder, _ = request.getfixturevalue("tpch_sf001")
    except EnvironmentProblem as exc:
        pytest.skip(str(exc))
    return Path(folder)


# generation ----------------------------------------------------------------------------------------------------

def test_sets_are_deterministic_and_distinct():
    first = rf.refresh_set(SF, 1)
    assert first == rf.refresh_set(SF, 1)
    second = rf.refresh_set(SF, 2)
    assert first.orders != second.orders and first.lineitems != second.lineitems


def test_generation_is_pinned():
    """Changing what a set holds changes every later result's data: bump _SEED_VERSION and this digest together."""
    rs = rf.refresh_set(SF, 1)
    digest = hashlib.sha256(repr((rs.orders, rs.lineitems, rs.delete_keys)).encode()).hexdigest()
    assert digest == "b2553ce7456b1c8abe5f48df4cc384e650c0682a055d30572d52f92108e7201e"


@pytest.mark.parametrize(("sf", "orders"), [(0.0001, 1), (0.001, 2), (0.01, 15), (0.1, 150), (1, 1500)])
def test_set_size_is_sf_times_1500(sf, orders):
    rs = rf.refresh_set(sf, 1)
    assert len(rs.orders) == len(rs.delete_keys) == orders
    per_order: dict[int, list[int]] = {}
    for line in rs.lineitems:
        per_order.setdefault(line[0], []).append(line[3])
    assert set(per_order) == set(rs.insert_keys)
    assert all(numbers == list(range(1, len(numbers) + 1)) and 1 <= len(numbers) <= 7
               for numbers in per_order.values())


def test_lineitems_per_order_average_four():
    rs = rf.refresh_set(1, 1)
    assert 3.7 < len(rs.lineitems) / len(rs.orders) < 4.3


def test_insert_keys_use_slots_9_to_16_and_never_collide():
    seen: set[int] = set()
    for update_set in range(1, 21):
        keys = rf.insert_keys(SF, update_set)
        assert all(8 <= k % 32 <= 15 for k in keys)
        assert not seen & set(keys)
        seen |= set(keys)
    assert rf.insert_keys(SF, 1) == [9, 10, 11, 12, 13, 14, 15, 40, 41, 42, 43, 44, 45, 46, 47]


def test_delete_keys_go_up_from_the_lowest_base_keys(data_dir):
    base = [int(k) for (k,) in read_tbl(data_dir / "orders.tbl", [0])]
    assert all(k % 32 <= 7 for k in base)  # the generator's sparse keys: 1..7, 32..39, 64..71, ...
    n = rf.orders_per_set(SF)
    for update_set in SETS:
        assert list(rf.delete_keys(SF, update_set)) == base[(update_set - 1) * n:update_set * n]
    assert rf.delete_keys(SF, rf.max_update_set(SF))[-1] == base[-1]
    inserted = {k for u in range(1, rf.max_update_set(SF) + 1) for k in rf.insert_keys(SF, u)}
    assert not inserted & set(base)


def test_update_sets_out_of_range_are_rejected():
    with pytest.raises(UsageError, match="1..1000"):
        rf.refresh_set(SF, 1001)
    with pytest.raises(UsageError):
        rf.refresh_set(SF, 0)
    with pytest.raises(UsageError):
        rf.refresh_set(0, 1)


def test_formulas_match_the_generated_base_data(data_dir):
    prices = {int(p): Decimal(price) for p, price in read_tbl(data_dir / "part.tbl", [0, 7])}
    assert all(rf.retail_price_cents(p) == price * 100 for p, price in prices.items())
    pairs = {(int(p), int(s)) for p, s in read_tbl(data_dir / "partsupp.tbl", [0, 1])}
    assert pairs == {(p, rf.partsupp_supplier(p, i, 100)) for p in range(1, 2001) for i in range(4)}
    totals = {int(k): Decimal(t) for k, t in read_tbl(data_dir / "orders.tbl", [0, 3])}
    computed: dict[int, int] = {}
    for key, price, discount, tax in read_tbl(data_dir / "lineitem.tbl", [0, 5, 6, 7]):
        cents = rf.line_charge_cents(int(Decimal(price) * 100), int(Decimal(discount) * 100),
                                     int(Decimal(tax) * 100))
        computed[int(key)] = computed.get(int(key), 0) + cents
    assert all(Decimal(c) / 100 == totals[k] for k, c in computed.items())


@pytest.mark.parametrize("sf", [0.01, 0.1, 1])
def test_rows_follow_the_spec_column_rules(sf):
    customers, parts, suppliers = int(150_000 * sf), int(200_000 * sf), int(10_000 * sf)
    for update_set in (1, 2):
        rs = rf.refresh_set(sf, update_set)
        assert all(len(o) == len(rf.ORDER_COLUMNS) for o in rs.orders)
        assert all(len(line) == len(rf.LINEITEM_COLUMNS) for line in rs.lineitems)
        lines: dict[int, list[tuple]] = {}
        for line in rs.lineitems:
            lines.setdefault(line[0], []).append(line)
        for okey, custkey, status, total, odate, priority, clerk, shippriority, comment in rs.orders:
            assert 1 <= custkey <= customers and custkey % 3 != 0
            assert date(1992, 1, 1) <= odate <= date(1998, 8, 2)
            assert priority in rf.PRIORITIES and shippriority == 0
            assert clerk.startswith("Clerk#") and 1 <= int(clerk[6:]) <= max(1000, sf * 1000) and len(clerk) == 15
            assert 19 <= len(comment) <= 78
            charges = 0
            for line in lines[okey]:
                (_, partkey, suppkey, _, qty, eprice, disc, tax, rflag, lstatus, ship, commit, receipt,
                 instruct, mode, lcomment) = line
                assert 1 <= partkey <= parts
                assert suppkey in {rf.partsupp_supplier(partkey, i, suppliers) for i in range(4)}
                assert qty == int(qty) and 1 <= qty <= 50
                assert eprice == qty * Decimal(rf.retail_price_cents(partkey)) / 100
                assert Decimal("0") <= disc <= Decimal("0.10") and Decimal("0") <= tax <= Decimal("0.08")
                assert timedelta(1) <= ship - odate <= timedelta(121)
                assert timedelta(30) <= commit - odate <= timedelta(90)
                assert timedelta(1) <= receipt - ship <= timedelta(30) and receipt <= date(1998, 12, 31)
                assert rflag in ("R", "A", "N") and (rflag == "N") == (receipt > date(1995, 6, 17))
                assert lstatus == ("O" if ship > date(1995, 6, 17) else "F")
                assert instruct in rf.INSTRUCTIONS and mode in rf.SHIP_MODES
                assert 10 <= len(lcomment) <= 43
                charges += rf.line_charge_cents(int(eprice * 100), int(disc * 100), int(tax * 100))
            assert total == Decimal(charges) / 100
            statuses = {line[9] for line in lines[okey]}
            assert status == ("F" if statuses == {"F"} else "O" if statuses == {"O"} else "P")


def test_params_per_dialect():
    rs = rf.refresh_set(SF, 1)
    orders, lineitems, keys = rs.params(SQLITE)
    assert isinstance(orders[0][3], float) and orders[0][4] == rs.orders[0][4].isoformat()
    assert lineitems[0][6] == float(rs.lineitems[0][6])
    assert keys == [(k,) for k in rs.delete_keys]
    orders, _, _ = rs.params(POSTGRES)
    assert isinstance(orders[0][3], Decimal) and isinstance(orders[0][4], date)
    assert rf.insert_sql("orders", MARIADB).endswith("VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)")
    assert rf.delete_sql("lineitem", "l_orderkey", SQLITE) == "DELETE FROM lineitem WHERE l_orderkey = ?"


def test_deleted_lineitem_counts_match_a_full_scan(data_dir):
    sets = [rf.refresh_set(SF, u) for u in (1, 2, 7)]
    counted = rf.deleted_lineitem_counts(data_dir / "lineitem.tbl", sets)
    per_key: dict[int, int] = {}
    for (key,) in read_tbl(data_dir / "lineitem.tbl", [0]):
        per_key[int(key)] = per_key.get(int(key), 0) + 1
    assert counted == {rs.update_set: sum(per_key[k] for k in rs.delete_keys) for rs in sets}
    base = rf.RowCounts(15000, 60175)
    expected = rf.expected_counts(base.orders, base.lineitem, sets, counted)
    assert expected.orders == 15000
    assert expected.lineitem == 60175 + sum(len(rs.lineitems) for rs in sets) - sum(counted.values())
    assert rf.expected_counts_from_data(data_dir, sets) == expected


# applying to real databases ------------------------------------------------------------------------------------

@pytest.fixture(scope="module", params=["none", "sqlcipher:aes-256-cbc"])
def refreshed(request, data_dir, tmp_path_factory):
    """A database at SF 0.01 after RF1+RF2 of update sets 1..3, with the timings."""
    engine = get_engine("sqlite")
    instance = engine.create_instance(Config(engine.name, parse_spec(request.param)),
                                      tmp_path_factory.mktemp("rf-db"))
    instance.start()
    load_tpch(instance, engine.dialect, data_dir)
    sets = [rf.refresh_set(SF, u) for u in SETS]
    conn = instance.connect()
    timings = []
    for rs in sets:
        timings.append(rf.apply_rf1(conn, engine.dialect, rs))
        timings.append(rf.apply_rf2(conn, engine.dialect, rs))
    yield instance, conn, sets, timings
    conn.close()
    instance.destroy()


def count(conn, table):
    return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_row_counts_after_refresh_pairs(refreshed, data_dir):
    instance, conn, sets, timings = refreshed
    expected = rf.expected_counts_from_data(data_dir, sets)
    assert (count(conn, "orders"), count(conn, "lineitem")) == (expected.orders, expected.lineitem)
    assert expected.orders == 15000 and expected.lineitem != 60175
    if instance.config.spec.mechanism == "sqlcipher":
        assert instance.encryption_status()["enabled"]


def test_timings_report_rows_changed(refreshed, data_dir):
    _, _, sets, timings = refreshed
    deleted = rf.deleted_lineitem_counts(data_dir / "lineitem.tbl", sets)
    assert [(t.function, t.update_set) for t in timings] == [(f, u) for u in SETS for f in ("RF1", "RF2")]
    for timing, rs in zip(timings[0::2], sets):
        assert (timing.orders, timing.lineitems) == (len(rs.orders), len(rs.lineitems))
    for timing, rs in zip(timings[1::2], sets):
        assert (timing.orders, timing.lineitems) == (len(rs.delete_keys), deleted[rs.update_set])
    assert all(t.nanoseconds > 0 and t.seconds == t.nanoseconds / 1e9 for t in timings)


def test_refreshed_rows_are_valid_in_the_database(refreshed):
    _, conn, sets, _ = refreshed
    new_keys = [k for rs in sets for k in rs.insert_keys]
    gone = [k for rs in sets for k in rs.delete_keys]
    marks = ", ".join("?" * len(new_keys))
    assert conn.execute(f"SELECT count(*) FROM orders WHERE o_orderkey IN ({marks})", new_keys).fetchone()[0] \
        == len(new_keys)
    marks_gone = ", ".join("?" * len(gone))
    for table, column in (("orders", "o_orderkey"), ("lineitem", "l_orderkey")):
        assert conn.execute(f"SELECT count(*) FROM {table} WHERE {column} IN ({marks_gone})", gone).fetchone()[0] == 0
    orphans = {
        "lineitem without partsupp": "SELECT count(*) FROM lineitem LEFT JOIN partsupp ON ps_partkey = l_partkey "
                                     "AND ps_suppkey = l_suppkey WHERE ps_partkey IS NULL",
        "lineitem without order": "SELECT count(*) FROM lineitem LEFT JOIN orders ON o_orderkey = l_orderkey "
                                  "WHERE o_orderkey IS NULL",
        "order without customer": "SELECT count(*) FROM orders LEFT JOIN customer ON c_custkey = o_custkey "
                                  "WHERE c_custkey IS NULL",
        "order without lineitem": "SELECT count(*) FROM orders WHERE NOT EXISTS "
                                  "(SELECT 1 FROM lineitem WHERE l_orderkey = o_orderkey)",
    }
    assert {name: conn.execute(sql).fetchone()[0] for name, sql in orphans.items()} == dict.fromkeys(orphans, 0)
    rows = conn.execute(f"SELECT o_totalprice, round(sum(round(round(l_extendedprice * (1 - l_discount), 2) "
                        f"* (1 + l_tax), 2)), 2) FROM orders JOIN lineitem ON l_orderkey = o_orderkey "
                        f"WHERE o_orderkey IN ({marks}) GROUP BY o_orderkey", new_keys).fetchall()
    assert len(rows) == len(new_keys) and all(abs(a - b) < 0.02 * 7 for a, b in rows)


@pytest.mark.parametrize("number", QUERY_NUMBERS)
def test_queries_still_answer_after_refresh(refreshed, number):
    _, conn, _, _ = refreshed
    cur = conn.execute(render_query(number, "sqlite", SF))
    rows = cur.fetchall()
    header, _ = read_answer_csv(reference_dir(SF) / f"q{number:02d}.csv")
    assert rows and len(cur.description) == len(header)


def test_failed_refresh_rolls_back(refreshed):
    _, conn, _, _ = refreshed
    before = (count(conn, "orders"), count(conn, "lineitem"))
    fresh = rf.refresh_set(SF, 4)
    duplicate_line = rf.RefreshSet(SF, 4, fresh.orders[:1], fresh.lineitems[:1] * 2, fresh.delete_keys[:1])
    with pytest.raises(Exception, match="UNIQUE"):
        rf.apply_rf1(conn, SQLITE, duplicate_line)
    assert (count(conn, "orders"), count(conn, "lineitem")) == before
    assert not conn.in_transaction
