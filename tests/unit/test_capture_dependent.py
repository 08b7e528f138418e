"""A captured write that needs another: the shop's checkout inserts an order, then its lines, whose foreign key
points to that order. The window's new orders are left out of data/ (docs/workloads/capture.md), and the sql
workload runs every write alone, followed by its undo: the lines' INSERT on its own finds no order. Capture joins
it to the order's INSERT (one step, both undos, the lines first), taking a call of the lines that points to the
order that step adds; without the order's INSERT among the kept statements, the lines' INSERT is left out with
the reason. The source is an SQLite file with a MariaDB slow log of two sessions that interleave."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

from tdebench.capture.run import Options, capture

SCHEMA = ("CREATE TABLE customers (id INTEGER PRIMARY KEY, city VARCHAR(20) NOT NULL);"
          "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers (id), "
          "status VARCHAR(10) NOT NULL);"
          "CREATE TABLE order_lines (order_id INTEGER NOT NULL REFERENCES orders (order_id), line_no INTEGER NOT NULL, "
          "quantity INTEGER NOT NULL, PRIMARY KEY (order_id, line_no));")
# (thread, seconds, statement): thread 9's order is logged after thread 8's, its lines before thread 8's
WINDOW = [
    ("8", 0.004, "SELECT order_id, status FROM orders WHERE customer_id = 3"),
    ("8", 0.0002, "INSERT INTO orders (order_id, customer_id, status) VALUES (500001, 2, 'new')"),
    ("9", 0.0002, "INSERT INTO orders (order_id, customer_id, status) VALUES (500002, 4, 'new')"),
    ("9", 0.0003, "INSERT INTO order_lines (order_id, line_no, quantity) VALUES (500002, 1, 2), (500002, 2, 1)"),
    ("8", 0.0003, "INSERT INTO order_lines (order_id, line_no, quantity) VALUES (500001, 1, 5)"),
    ("9", 0.004, "SELECT order_id, status FROM orders WHERE customer_id = 5"),
]


def slow_log(entries: list[tuple[str, float, str]]) -> str:
    head = ("/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-0+deb12u1-log (Debian 12). started with:\n"
            "Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n")
    return head + "".join(
        f"# User@Host: app[app] @  [127.0.0.1]\n# Thread_id: {session}  Schema: shop  QC_hit: No\n"
        f"# Query_time: {seconds:.6f}  Lock_time: 0.000010  Rows_sent: 0  Rows_examined: 0\n"
        f"SET timestamp={1732664701 + i};\n{text};\n" for i, (session, seconds, text) in enumerate(entries))


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """The shop after the window (its new orders and lines are in the tables) and the window's slow log."""
    base = tmp_path_factory.mktemp("capture-dependent")
    db = base / "shop.db"
    conn = sqlite3.connect(db)
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO customers VALUES (?, ?)", [(i, ["Lyon", "Porto"][i % 2]) for i in range(1, 11)])
    conn.executemany("INSERT INTO orders VALUES (?, ?, 'paid')", [(i, i % 10 + 1) for i in range(1, 41)])
    conn.executemany("INSERT INTO order_lines VALUES (?, 1, ?)", [(i, i % 4 + 1) for i in range(1, 41)])
    for _, _, text in WINDOW:
        if text.startswith("INSERT"):
            conn.execute(text)
    conn.commit()
    conn.close()
    log = base / "slow.log"
    log.write_text(slow_log(WINDOW))
    return db, log


def captured_db(out: Path, path: Path) -> sqlite3.Connection:
    """The captured workload loaded into SQLite, foreign keys enforced."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript((out / "schema.sql").read_text())
    for table in ("customers", "orders", "order_lines"):
        with open(out / "data" / f"{table}.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows[1:])
    conn.commit()
    return conn


def statements(path: Path) -> list[str]:
    text = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("--"))
    return [s.strip() for s in text.split(";") if s.strip()]


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("orders", "order_lines")}


def test_the_lines_insert_joins_the_order_insert_it_needs(source, tmp_path):
    db, log = source
    out = tmp_path / "captured"
    capture(Options(str(db), out, log), lambda line: None)
    manifest = json.loads((out / "capture.json").read_text())
    writes = [s for s in manifest["steps"] if s["kind"] == "write"]
    assert [(s["name"], s["calls"]) for s in writes] == [("w01_orders", 2)], manifest["steps"]
    assert writes[0]["joined"] == [{"table": "order_lines", "calls": 2, "seconds": 0.0006}]
    write = statements(out / "writes" / "w01_orders.sql")
    assert len(write) == 2 and "500001" in write[0] and "order_lines" in write[1], write
    assert "500001" in write[1] and "500002" not in write[1], "the lines of the order the step adds"
    conn = captured_db(out, tmp_path / "captured.db")
    before = counts(conn)
    assert before == {"orders": 40, "order_lines": 40}, "the window's rows are left out of data/"
    for _ in range(2):  # as the sql workload runs a write: alone, then its undo, and again
        for sql in write:
            conn.execute(sql)
        assert counts(conn) == {"orders": 41, "order_lines": 41}
        for sql in statements(out / "writes" / "w01_orders.undo.sql"):
            conn.execute(sql)
        assert counts(conn) == before
    conn.close()


def test_a_write_whose_parent_is_not_kept_is_left_out_with_the_reason(source, tmp_path):
    db, log = source
    out = tmp_path / "captured"
    capture(Options(str(db), out, log, top=2), lambda line: None)  # the read and the lines: no order INSERT
    manifest = json.loads((out / "capture.json").read_text())
    assert [s["kind"] for s in manifest["steps"]] == ["query"], manifest["steps"]
    (left,) = manifest["left_out"]
    assert "order_lines" in left["statement"] and "500001" not in left["statement"]
    assert "foreign key" in left["reason"] and "orders" in left["reason"], left
    assert not (out / "writes").exists()
