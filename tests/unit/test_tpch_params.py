import re
from datetime import date
from decimal import Decimal

import pytest

from tdebench.workloads.tpch import schema
from tdebench.workloads.tpch.params import QUERY_NUMBERS, add_months, literal, parameters, render_query

DIALECTS = schema.DIALECTS


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("number", QUERY_NUMBERS)
def test_every_query_renders_completely(number, dialect):
    sql = render_query(number, dialect, 0.01)
    assert "{{" not in sql and "}}" not in sql
    assert not sql.rstrip().endswith(";")
    assert sql.lower().lstrip().startswith(("select", "with"))


def test_query_numbers():
    assert list(QUERY_NUMBERS) == list(range(1, 23))


@pytest.mark.parametrize("number", [0, 23, -1, "1", 1.0, True])
def test_unknown_query_number_raises(number):
    with pytest.raises(ValueError):
        render_query(number, "postgres", 1)


@pytest.mark.parametrize("dialect", ["oracle", "", "SQLite"])
def test_unknown_dialect_raises(dialect):
    with pytest.raises(ValueError):
        render_query(1, dialect, 1)


@pytest.mark.parametrize("sf", [0, -1])
def test_bad_scale_factor_raises(sf):
    with pytest.raises(ValueError):
        render_query(1, "postgres", sf)


def test_derived_values_are_exact():
    assert parameters(1, 1)["ship_date_max"] == date(1998, 9, 2)
    q6 = parameters(6, 1)
    assert (q6["discount_min"], q6["discount_max"]) == (Decimal("0.05"), Decimal("0.07"))
    assert q6["date_end"] == date(1995, 1, 1)
    assert parameters(4, 1)["date_end"] == date(1993, 10, 1)
    assert parameters(10, 1)["date_end"] == date(1994, 1, 1)
    assert parameters(14, 1)["date_end"] == date(1995, 10, 1)
    assert parameters(11, 0.01)["fraction"] == Decimal("0.01")
    assert parameters(11, 1)["fraction"] == Decimal("0.0001")
    q19 = parameters(19, 1)
    assert [q19[f"quantity{i}_max"] for i in (1, 2, 3)] == [11, 20, 30]


def test_add_months_crosses_years():
    assert add_months(date(1993, 11, 1), 3) == date(1994, 2, 1)
    assert add_months(date(1995, 12, 1), 1) == date(1996, 1, 1)


def test_literals_per_dialect():
    assert literal(date(1994, 1, 1), "postgres") == "date '1994-01-01'"
    assert literal(date(1994, 1, 1), "sqlite") == "'1994-01-01'"
    assert literal("O'Brien", "mariadb") == "'O''Brien'"
    assert literal(Decimal("0.0001") / Decimal("3"), "postgres").startswith("0.0000333")
    assert literal(Decimal("1E-7"), "postgres") == "0.0000001"


def test_q6_bounds_rendered_as_literals():
    sql = render_query(6, "sqlite", 1)
    assert "between 0.05 and 0.07" in sql
    assert "l_shipdate >= '1994-01-01'" in sql and "l_shipdate < '1995-01-01'" in sql


def test_q11_fraction_depends_on_sf():
    assert "* 0.01\n" in render_query(11, "postgres", 0.01)
    assert "* 0.0001\n" in render_query(11, "postgres", 1)


def test_row_limits():
    limits = {2: 100, 3: 10, 10: 20, 18: 100, 21: 100}
    for dialect in DIALECTS:
        for number in QUERY_NUMBERS:
            found = re.findall(r"\blimit\s+(\d+)", render_query(number, dialect, 1), re.I)
            assert found == ([str(limits[number])] if number in limits else [])


def test_sqlite_has_no_ansi_only_syntax():
    for number in QUERY_NUMBERS:
        sql = render_query(number, "sqlite", 1).lower()
        assert "extract(" not in sql and "interval" not in sql and "date '" not in sql
        assert " from 1 for " not in sql
