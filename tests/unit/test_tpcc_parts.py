"""TPC-C pieces without a server: options, random inputs, mix, histogram, schema, population rules."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from tdebench.errors import UsageError
from tdebench.workloads.tpcc import schema
from tdebench.workloads.tpcc.datagen import item_rows, order_tables, warehouse_tables, write_rows
from tdebench.workloads.tpcc.histogram import Histogram
from tdebench.workloads.tpcc.options import parse_duration, parse_options, parse_vus
from tdebench.workloads.tpcc.procs_mariadb import ITEM_WIDTH, encode_items
from tdebench.workloads.tpcc.rand import C_LAST_RUN, TpccRandom, last_name
from tdebench.workloads.tpcc.txns import INVALID_ITEM, MIX, NEW_ORDER, PAYMENT, Terminal, draw
from tdebench.workloads.tpcc.vu import Deck


def test_durations_and_vus():
    assert parse_duration("30s", "duration") == 30 and parse_duration("5m", "d") == 300
    assert parse_duration("1h", "d") == 3600 and parse_duration(90, "d") == 90 and parse_duration("500ms", "d") == 0.5
    assert parse_vus("5,10,15") == [5, 10, 15] and parse_vus(3) == [3] and parse_vus([1, 2]) == [1, 2]
    opts = parse_options({"warehouses": "2", "vus": "1,2", "duration": "30s", "rampup": "5s", "keying_thinking": "on"})
    assert (opts.warehouses, opts.vus, opts.duration, opts.rampup, opts.keying_thinking) == (2, [1, 2], 30, 5, True)


def test_a_precision_run_has_short_steps_unless_told_otherwise():
    assert (parse_options({}).duration, parse_options({}).rampup) == (60, 10)
    short = parse_options({}, precision=True)
    assert (short.duration, short.rampup) == (10, 5)
    given = parse_options({"duration": "30s", "rampup": "2s"}, precision=True)
    assert (given.duration, given.rampup) == (30, 2)
    assert parse_options({"Duration": "20s"}, precision=True).duration == 20  # keys are read as options are


@pytest.mark.parametrize("raw, words", [
    ({"vus": "0"}, ["vus", "0"]), ({"vus": "1,x"}, ["x", "vus"]), ({"vus": "2,2"}, ["twice"]),
    ({"duration": "soon"}, ["duration", "soon"]), ({"warehouses": "0"}, ["warehouses", "0"]),
    ({"wharehouses": 2}, ["wharehouses", "warehouses"]), ({"mode": "fast"}, ["mode", "fast"]),
])
def test_bad_options_name_the_option_and_value(raw, words):
    with pytest.raises(UsageError) as err:
        parse_options(raw)
    text = str(err.value)
    assert all(w in text for w in words), text


def test_deck_gives_the_exact_mix_per_hundred():
    deck = Deck(random.Random(1))
    counts = Counter(deck.draw() for _ in range(1000))
    assert counts == Counter({k: 10 * n for k, n in MIX.items()})
    assert MIX[NEW_ORDER] == 45 and MIX[PAYMENT] == 43 and sum(MIX.values()) == 100


def test_new_order_inputs():
    r, t = TpccRandom(7, c_last=C_LAST_RUN), Terminal(1, 3)
    orders = [draw(NEW_ORDER, r, t) for _ in range(4000)]
    rollbacks = sum(o.items[-1][0] == INVALID_ITEM for o in orders)
    assert 20 <= rollbacks <= 65  # 1%
    lines = [it for o in orders for it in o.items]
    remote = sum(sw != 1 for _, sw, _ in lines) / len(lines)
    assert 0.005 < remote < 0.02  # 1% of lines from a remote warehouse
    for o in orders:
        ids = [i for i, _, _ in o.items]
        assert ids == sorted(ids) and len(set(ids)) == len(ids) and 5 <= len(ids) <= 15
        assert all(1 <= q <= 10 for _, _, q in o.items) and 1 <= o.d_id <= 10 and 1 <= o.c_id <= 3000
    single = [draw(NEW_ORDER, r, Terminal(1, 1)) for _ in range(200)]
    assert all(sw == 1 for o in single for _, sw, _ in o.items)


def test_payment_inputs():
    r, t = TpccRandom(8, c_last=C_LAST_RUN), Terminal(2, 4)
    pays = [draw(PAYMENT, r, t) for _ in range(4000)]
    by_name = sum(p.c_last is not None for p in pays) / len(pays)
    remote = sum(p.c_w_id != 2 for p in pays) / len(pays)
    assert 0.57 < by_name < 0.63 and 0.12 < remote < 0.18
    assert all(1 <= p.amount <= 5000 for p in pays) and all(p.c_last or 1 <= p.c_id <= 3000 for p in pays)


def test_histogram_percentiles_are_within_one_percent():
    rng = random.Random(3)
    values = sorted(int(rng.lognormvariate(15, 1)) for _ in range(20000))
    h, other = Histogram(), Histogram()
    for i, v in enumerate(values):
        (h if i % 2 else other).add(v)
    h.merge(other)
    assert h.count == len(values) and h.max_ns == values[-1] and h.min_ns == values[0]
    for pct in (50, 95, 99):
        exact = values[max(0, -(-pct * len(values) // 100) - 1)] / 1e9
        assert h.percentile(pct) == pytest.approx(exact, rel=0.01)
    assert Histogram().percentile(50) is None


def test_schema_per_dialect():
    for dialect in ("sqlite", "mariadb", "postgres"):
        ddl = schema.create_table_sql(dialect)
        assert len(ddl) == 9 and all("NULL" in d and "PRIMARY KEY" in d for d in ddl if "history" not in d)
    pg = "\n".join(schema.create_table_sql("postgres"))
    assert "CONSTRAINT customer_name UNIQUE (c_w_id, c_d_id, c_last, c_first, c_id)" in pg
    assert schema.index_sql("postgres") == [] and len(schema.index_sql("mariadb")) == 3
    assert schema.index_sql("mariadb")[-1] == ("CREATE INDEX history_customer ON history "
                                               "(h_c_w_id, h_c_d_id, h_c_id, h_amount)")
    assert "WITHOUT ROWID" in schema.create_table_sql("sqlite")[0]


def test_last_names_and_items():
    assert last_name(0) == "BARBARBAR" and last_name(371) == "PRICALLYOUGHT" and last_name(999) == "EINGEINGEING"
    items = list(item_rows(5))
    assert len(items) == 100_000 and [i[0] for i in items[:3]] == [1, 2, 3]
    original = sum("ORIGINAL" in i[4] for i in items) / len(items)
    assert 0.09 < original < 0.11
    assert all(26 <= len(i[4]) <= 50 and 1 <= float(i[3]) <= 100 for i in items[:1000])
    assert list(item_rows(5))[:50] == items[:50]  # seeded


def test_initial_orders_follow_the_population_rules():
    orders, lines, new_orders = order_tables(TpccRandom("s-w1"), 1)
    assert len(orders) == 30_000 and len(new_orders) == 9_000
    assert sum(o[6] for o in orders) == len(lines)  # sum(O_OL_CNT) = order lines
    undelivered = [o for o in orders if o[5] == schema.UNDELIVERED_CARRIER]
    assert len(undelivered) == 9_000 and min(o[2] for o in undelivered) == 2101
    per_district = Counter(o[1] for o in orders)
    assert set(per_district.values()) == {3000}
    customers = sorted(o[3] for o in orders if o[1] == 1)
    assert customers == list(range(1, 3001))  # a permutation of the customers


def test_population_is_deterministic_and_written_as_tbl_lines(tmp_path):
    def head(seed: str) -> dict[str, list]:
        tables = warehouse_tables(TpccRandom(seed), 1)
        return {name: list(itertools.islice(rows, 2000)) for name, rows in tables.items()}

    first, again, other = head("11-w1"), head("11-w1"), head("12-w1")
    assert first == again and first["customer"] != other["customer"]
    customer = first["customer"][0]
    assert customer[:3] == (1, 1, 1) and customer[5] == "BARBARBAR" and customer[-1] and 300 <= len(customer[-1]) <= 500
    assert first["district"][0][-1] == 3001 and first["warehouse"][0][-1] == "300000.00"
    assert write_rows(tmp_path / "c.tbl", first["customer"][:3]) == 3
    line = (tmp_path / "c.tbl").read_text().splitlines()[0]
    assert line.endswith("|") and line.split("|")[5] == "BARBARBAR" and len(line.split("|")) == 22


def test_item_encoding_for_mariadb():
    text = encode_items([(12, 1, 5), (100001, 3, 10)])
    assert text == "00001200001051000010000310" and len(text) == 2 * ITEM_WIDTH


def test_workload_refuses_bad_options_before_any_work(tmp_path):
    from tdebench.encryption import PLAIN
    from tdebench.api.engine import Config
    from tdebench.results.rundir import RunDirectory
    from tdebench.api.plan import RunPlan
    from tdebench.workloads import make_workload

    rundir = RunDirectory.create(tmp_path / "run")
    configs = [Config("sqlite", PLAIN)]
    from tdebench.api.dialect import MARIADB, SQLITE

    procedures = make_workload(RunPlan(configs=configs, workload="tpcc", workload_options={"mode": "procedures"}),
                               rundir)
    with pytest.raises(UsageError, match="mode = procedures"):
        procedures.check_dialect("sqlite-none", SQLITE)  # the orchestrator asks before any work
    procedures.check_dialect("mariadb-none", MARIADB)
    with pytest.raises(UsageError, match="duration"):
        make_workload(RunPlan(configs=configs, workload="tpcc", workload_options={"duration": "-3s"}), rundir)
    workload = make_workload(RunPlan(configs=configs, workload="tpcc", workload_options={"vus": "1,2"}), rundir)
    assert workload.opts.vus == [1, 2] and workload.plan_json()["mode"] == "auto"
    assert workload.describe() == "tpcc (vus 1,2, duration 60s, rampup 10s)"
    precise = make_workload(RunPlan(configs=configs, workload="tpcc", workload_options={"vus": "4"}, precision=2.0),
                            rundir)
    assert (precise.opts.duration, precise.describe()) == (10, "tpcc (vus 4, duration 10s, rampup 5s)")
    assert "ORIGINAL" in workload.known_plaintext and "order_line" in workload.schema_tables
