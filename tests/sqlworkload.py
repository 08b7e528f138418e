"""A tiny workload directory for the sql workload's tests, written into a temporary directory."""

from __future__ import annotations

from pathlib import Path

SCHEMA = """-- a tiny shop
CREATE TABLE customers (
  id    INTEGER PRIMARY KEY,
  name  VARCHAR(40) NOT NULL,   -- the customer's name, e.g. "Ada, Countess"
  city  VARCHAR(30) NOT NULL,
  note  TEXT
);
CREATE TABLE orders (
  id          INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers (id),
  placed      DATE NOT NULL,
  amount      DECIMAL(8,2) NOT NULL,
  paid        BOOLEAN NOT NULL
);
CREATE INDEX orders_customer_idx ON orders (customer_id);
"""
CUSTOMERS = ('id,name,city,note\n'
             '1,"Lovelace, Ada",Marylebone Gardens,"likes | pipes and \\\\ backslashes"\n'
             '2,Charles Babbage,Walworth Village,\n'
             '3,Grace Hopper,Arlington County,"two\nlines"\n')
ORDERS = ("id\tcustomer_id\tplaced\tamount\tpaid\n"
          "1\t1\t2024-01-05\t10.50\ttrue\n"
          "2\t1\t2024-02-01\t99.99\tfalse\n"
          "3\t2\t2024-02-03\t5\t1\n")
QUERIES = {
    "by_city": "SELECT c.city, COUNT(*) AS orders, SUM(o.amount) AS total\n"
               "FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.city",
    "notes": "SELECT id, note FROM customers WHERE note IS NOT NULL ORDER BY id",
}
WRITE = "INSERT INTO orders (id, customer_id, placed, amount, paid) VALUES (100, 3, '2024-03-01', 1.25, true);\n"
UNDO = "DELETE FROM orders WHERE id >= 100;\n"


def make_workload_dir(root: Path, *, toml: str = "", writes: bool = True) -> Path:
    """``root`` holding schema.sql, data/, queries/, writes/ (with undo) and, if given, workload.toml."""
    (root / "data").mkdir(parents=True)
    (root / "queries").mkdir()
    (root / "schema.sql").write_text(SCHEMA)
    (root / "data" / "customers.csv").write_text(CUSTOMERS)
    (root / "data" / "orders.tsv").write_text(ORDERS)
    for name, sql in QUERIES.items():
        (root / "queries" / f"{name}.sql").write_text(sql + "\n")
    if writes:
        (root / "writes").mkdir()
        (root / "writes" / "add_order.sql").write_text(WRITE)
        (root / "writes" / "add_order.undo.sql").write_text(UNDO)
    if toml:
        (root / "workload.toml").write_text(toml)
    return root
