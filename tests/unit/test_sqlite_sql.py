"""Standard SQL date expressions rewritten for SQLite (tdebench.sqltext.sqlite through its transpile), run on a real
in-memory SQLite: the answers are those PostgreSQL gives for the same statements."""

from __future__ import annotations

import sqlite3

import pytest

from tdebench.sqltext.transpile import transpile

DATES = {"due", "issued"}


@pytest.fixture
def db():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (issued DATE, due DATE, paid_at TIMESTAMP, amount NUMERIC(10,2))")
    conn.execute("INSERT INTO t VALUES ('2025-01-31', '2025-02-14', '2025-02-20 09:30:00', 12.5)")
    yield conn
    conn.close()


@pytest.mark.parametrize("postgres, expected", [
    ("SELECT EXTRACT(YEAR FROM issued), EXTRACT(MONTH FROM issued), EXTRACT(DAY FROM issued) FROM t", (2025, 1, 31)),
    ("SELECT EXTRACT(QUARTER FROM due), EXTRACT(HOUR FROM paid_at), EXTRACT(DOW FROM issued) FROM t", (1, 9, 5)),
    ("SELECT CAST(issued + INTERVAL '1 month' AS DATE) FROM t", ("2025-03-03",)),  # SQLite's month arithmetic
    ("SELECT CAST(due - INTERVAL '14 days' AS DATE), CAST(issued + INTERVAL '1' YEAR AS DATE) FROM t",
     ("2025-01-31", "2026-01-31")),
    ("SELECT paid_at - INTERVAL '2 hours' FROM t", ("2025-02-20 07:30:00",)),
    ("SELECT COUNT(*) FROM t WHERE paid_at > due + INTERVAL '5 days'", (1,)),
    ("SELECT COUNT(*) FROM t WHERE paid_at > due + INTERVAL '6 days'", (1,)),  # 02-20 09:30 after 02-20 00:00
    ("SELECT COUNT(*) FROM t WHERE paid_at > due + INTERVAL '7 days'", (0,)),
    ("SELECT COUNT(*) FROM t WHERE issued BETWEEN DATE '2025-01-01' AND DATE '2025-01-01' + INTERVAL '30 days'",
     (1,)),
    ("SELECT COALESCE(NULL, CAST(amount AS DECIMAL(10,2))) FROM t", (12.5,)),
    ("SELECT SUBSTRING(paid_at FROM 6 FOR 2), SUBSTRING(paid_at FROM 12), SUBSTRING(paid_at, 1, 4) FROM t",
     ("02", "09:30:00", "2025")),
])
def test_rewritten_dates_run_on_sqlite(db, postgres, expected):
    sql = transpile(postgres, "sqlite", pretty=False, date_columns=DATES)
    assert db.execute(sql).fetchone() == expected, sql


def test_substring_is_substr_which_every_sqlite_reads():
    assert transpile("SELECT SUBSTRING(c FROM 1 FOR 2) FROM t", "sqlite", pretty=False) == "SELECT SUBSTR(c, 1, 2) FROM t"


def test_decimal_types_stay_numeric():
    sql = transpile("CREATE TABLE p (price DECIMAL(10,2), rate NUMERIC)", "sqlite", pretty=False)
    assert sql == "CREATE TABLE p (price NUMERIC(10, 2), rate NUMERIC)"


def test_a_computed_interval_is_refused():
    with pytest.raises(ValueError, match="no SQLite equivalent"):
        transpile("SELECT issued + n * INTERVAL '1 day' FROM t", "sqlite", date_columns=DATES)
