"""The sql workload's parts without a server: the directory check, schema parsing, CSV/TSV conversion,
sampled values, answer comparison. Loading and running on SQLite is in tests/unit/test_workload_kit.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tdebench.api.tables import split_line
from tdebench.sqltext.statements import parse_statements, split_statements
from tdebench.workloads.sql import answer_check, csvdata
from tdebench.workloads.sql.layout import DirProblem, check_family, load_workload_dir
from tests.sqlworkload import make_workload_dir

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "orders-sql"


@pytest.fixture
def shop(tmp_path) -> Path:
    return make_workload_dir(tmp_path / "shop")


def problem(root: Path) -> DirProblem:
    with pytest.raises(DirProblem) as info:
        load_workload_dir(root)
    assert "\n" not in str(info.value) and info.value.fix
    return info.value


def test_the_tiny_directory_and_the_example_are_read(shop):
    wd = load_workload_dir(shop)
    assert [t.name for t in wd.tables] == ["customers", "orders"]
    orders = wd.tables[1]
    assert [c.type for c in orders.columns] == ["int", "int", "date", "decimal(8,2)", "bool"]
    assert orders.primary_key == ("id",) and orders.foreign_key_columns == ("customer_id",)
    assert wd.tables[0].column("note").nullable and not wd.tables[0].column("name").nullable
    assert [(s.name, s.kind) for s in wd.steps] == [("by_city", "query"), ("notes", "query"), ("add_order", "write")]
    assert wd.steps[2].writes_to == {"orders"}
    assert wd.info.after_load == ["CREATE INDEX orders_customer_idx ON orders (customer_id)"]
    example = load_workload_dir(EXAMPLE)
    assert example.database == "orders" and example.missing_data == ["orders", "order_lines"]
    for family in ("sqlite", "mariadb", "postgres"):
        check_family(example, family)


def test_statements_lose_comments_but_keep_their_text():
    text = "-- a\nCREATE TABLE t (\n  a INT, -- x, y\n  b TEXT /* c, d */\n);\nSELECT ';' FROM t -- z\n"
    assert split_statements(text, "postgres") == ["CREATE TABLE t (\n  a INT,\nb TEXT\n)", "SELECT ';' FROM t"]


@pytest.mark.parametrize("change, fragments", [
    (lambda r: (r / "schema.sql").unlink(), ["schema.sql", "is missing"]),
    (lambda r: (r / "queries" / "notes.sql").write_text("SELECT id FROM customers WHERE\n"),
     ["queries/notes.sql", "syntax error", "line 1"]),
    (lambda r: (r / "queries" / "notes.sql").write_text("SELECT 1;\n\nSELECT id\nFROM customers\n"),
     ["queries/notes.sql", "2 statements"]),
    (lambda r: (r / "queries" / "notes.sql").write_text("-- one\n\nSELECT id\nFROM customers ORDER id\n"),
     ["queries/notes.sql", "line 4"]),
    (lambda r: (r / "queries" / "by_city.oracle.sql").write_text("SELECT 1"),
     ["queries/by_city.oracle.sql", "unknown dialect override 'oracle'"]),
    (lambda r: (r / "schema.mysql.sql").write_text("CREATE TABLE x (a INT)"),
     ["schema.mysql.sql", "unknown dialect override 'mysql'"]),
    (lambda r: (r / "queries" / "lost.mariadb.sql").write_text("SELECT 1"),
     ["queries/lost.mariadb.sql", "queries/lost.sql, which does not exist"]),
    (lambda r: (r / "queries" / "notes.sql").write_text("SELECT * FROM customer"),
     ["queries/notes.sql", "uses table customer"]),
    (lambda r: (r / "queries" / "notes.sql").write_text("DELETE FROM customers"),
     ["queries/notes.sql", "not a query"]),
    (lambda r: (r / "writes" / "add_order.undo.sql").unlink(), ["writes/add_order.sql", "has no undo"]),
    (lambda r: (r / "data" / "customers.csv").write_text("id,name,city,note\n1,Ada,London\n"),
     ["data/customers.csv", "line 2: 3 fields, expected 4"]),
    (lambda r: (r / "data" / "customers.csv").write_text("id,name,city\n1,Ada,London\n"),
     ["data/customers.csv", "header", "no column note"]),
    (lambda r: (r / "data" / "customers.csv").write_text("id,name,city,note\n1,,London,\n"),
     ["data/customers.csv", "line 2, column name", "NOT NULL"]),
    (lambda r: (r / "data" / "orders.tsv").write_text("id\tcustomer_id\tplaced\tamount\tpaid\n1\t1\t2024-13-01\t1\tt\n"),
     ["data/orders.tsv", "line 2, column placed", "not a date"]),
    (lambda r: (r / "data" / "orders.tsv").write_text("id\tcustomer_id\tplaced\tamount\tpaid\n1\t1\t2024-01-01\t1.005\tt\n"),
     ["data/orders.tsv", "column amount", "2 decimal places"]),
    (lambda r: (r / "data" / "orders.tsv").rename(r / "data" / "order.tsv"),
     ["data/order.tsv", "table order"]),
    (lambda r: (r / "data" / "orders.tsv").unlink(), ["data/orders.csv", "is missing"]),
    (lambda r: (r / "workload.toml").write_text("[weigths]\nby_city = 2\n"), ["workload.toml", "unknown key 'weigths'"]),
    (lambda r: (r / "workload.toml").write_text("[weights]\nby_cty = 2\n"), ["workload.toml", "step 'by_cty'"]),
    (lambda r: (r / "schema.sql").write_text("CREATE TABLE customers (id INTEGER, shape GEOMETRY);"),
     ["schema.sql", "GEOMETRY"]),
], ids=["no-schema", "syntax", "two-statements", "line-in-file", "unknown-override", "mysql-override",
        "variant-alone", "unknown-table", "not-a-query", "no-undo", "csv-columns", "csv-header", "not-null",
        "bad-date", "decimal-scale", "data-unknown-table", "no-data", "toml-key", "toml-weight", "bad-type"])
def test_a_malformed_directory_names_the_file_and_the_fix(shop, change, fragments):
    change(shop)
    found = problem(shop)
    for fragment in fragments:
        assert fragment in str(found), str(found)


def test_a_variant_must_create_the_canonical_tables(shop):
    (shop / "schema.sqlite.sql").write_text("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);")
    assert "creates table" in str(problem(shop)) and "schema.sqlite.sql" in str(problem(shop))


def test_canonical_sql_is_checked_in_each_family_the_plan_runs(shop):
    (shop / "queries" / "notes.sql").write_text("SELECT id FROM customers WHERE id = 1 FOR UPDATE")  # no SQLite
    wd = load_workload_dir(shop)
    check_family(wd, "mariadb")
    with pytest.raises(DirProblem, match="queries/notes.sql: cannot be rewritten for sqlite \\(Locking reads") as err:
        check_family(wd, "sqlite")
    assert err.value.fix == "write the sqlite text as a variant, queries/notes.sqlite.sql"
    (shop / "queries" / "notes.sqlite.sql").write_text("SELECT id FROM customers WHERE id = 1")
    check_family(load_workload_dir(shop), "sqlite")


def test_canonical_sql_is_rewritten_for_each_family(shop):
    (shop / "queries" / "dates.sql").write_text(
        "SELECT EXTRACT(YEAR FROM o.placed) AS y, COALESCE(CAST(o.amount AS DECIMAL(10,2)), 0) FROM orders o "
        "WHERE o.placed >= DATE '2024-01-01' AND o.placed < DATE '2024-01-01' + INTERVAL '30 days'")
    wd = load_workload_dir(shop)
    step = next(s for s in wd.steps if s.name == "dates")
    sqlite = wd.statements(step.sql, "sqlite")[0]
    assert "STRFTIME('%Y', o.placed)" in sqlite and "DATE(DATE('2024-01-01'), '+30 day')" in sqlite
    assert "CAST('2024-01-01' AS DATE) + INTERVAL '30' DAY" in wd.statements(step.sql, "mariadb")[0]
    assert wd.statements(step.sql, "postgres")[0] == (shop / "queries" / "dates.sql").read_text()


def test_conversion_escapes_and_is_cached(shop, tmp_path):
    wd = load_workload_dir(shop)
    cache = tmp_path / "cache"
    customers = csvdata.convert(wd.data["customers"], wd.tables[0], "", cache)
    lines = customers.path.read_text().splitlines()
    assert [split_line(line) for line in lines] == [
        ["1", "Lovelace, Ada", "Marylebone Gardens", "likes | pipes and \\\\ backslashes"],
        ["2", "Charles Babbage", "Walworth Village", None],
        ["3", "Grace Hopper", "Arlington County", "two\nlines"]]
    orders = csvdata.convert(wd.data["orders"], wd.tables[1], "", cache)
    assert orders.path.read_text().splitlines()[0] == "1|1|2024-01-05|10.50|1|"
    stamp = customers.path.stat().st_mtime_ns
    assert csvdata.convert(wd.data["customers"], wd.tables[0], "", cache).path.stat().st_mtime_ns == stamp
    (shop / "data" / "customers.csv").write_text("id,name,city,note\n1,Ada,London,\n")
    assert csvdata.convert(wd.data["customers"], wd.tables[0], "", cache).path != customers.path


def test_null_string_keeps_empty_text(shop, tmp_path):
    (shop / "data" / "customers.csv").write_text("id,name,city,note\n1,Ada,London,\n2,Bob,Paris,NULL\n")
    (shop / "workload.toml").write_text('[data]\nnull = "NULL"\n')
    wd = load_workload_dir(shop)
    converted = csvdata.convert(wd.data["customers"], wd.tables[0], "NULL", tmp_path)
    assert [split_line(line)[3] for line in converted.path.read_text().splitlines()] == ["", None]


def test_sampled_values_come_from_text_columns_that_are_not_keys_nor_in_the_sql(shop, tmp_path):
    (shop / "queries" / "notes.sql").write_text("SELECT id FROM customers WHERE city = 'Walworth Village'")
    wd = load_workload_dir(shop)
    converted = [csvdata.convert(wd.data[t.name], t, "", tmp_path) for t in wd.tables]
    picked = csvdata.sample_values(converted, 4, wd.sql_text())
    assert picked == ["Lovelace, Ada", "Marylebone Gardens", "likes | pipes and \\\\ backslashes", "Charles Babbage"]
    assert "Walworth Village" not in csvdata.sample_values(converted, 50, wd.sql_text())


def test_answers_compare_as_multisets_within_the_float_tolerance():
    a = answer_check.normalize([(2, 1.004), (1, "x ")])
    b = answer_check.normalize([(1, "x"), (2, 1.0)])
    assert a == [["1", "x"], ["2", "1.00"]] and answer_check.compare("q", a, b) == []
    assert answer_check.compare("q", [["1", "1.00"]], [["1", "1.02"]]) == ["q row 1 column 2: expected 1.00, got 1.02"]
    assert answer_check.compare("q", [["1"]], []) == ["q: expected 1 rows, got 0"]
    verdicts = answer_check.verdicts({"p": {"q": a}, "e": {"q": b}, "f": {"q": [["9", "9"]]}}, {"p": "p", "e": "p", "f": "p"})
    assert verdicts["e"]["answers_equal"] is True and verdicts["f"]["answers_equal"] is False
    assert verdicts["p"]["answers_equal"] is None


def test_the_example_directory_is_not_changed_by_reading_it(tmp_path):
    copy = tmp_path / "orders-sql"
    shutil.copytree(EXAMPLE, copy)
    before = sorted(p.name for p in copy.rglob("*"))
    load_workload_dir(copy)
    assert sorted(p.name for p in copy.rglob("*")) == before


def test_one_connection_runs_a_statement_half_a_second_per_block_in_visits_of_20_ms_by_default(shop):
    """The defaults: 500 ms per statement, config and block, in visits of 20 ms; a shorter duration is one
    visit."""
    from tdebench.workloads.sql.options import parse_options

    default = parse_options({"dir": str(shop)})
    assert (default.measured_seconds, default.slice_seconds) == (0.5, 0.02)
    short = parse_options({"dir": str(shop), "duration": "10ms"})
    assert (short.measured_seconds, short.slice_seconds) == (0.01, 0.01)
