"""TPC-C consistency conditions (clause 3.3.2), checked after the load and after every trial.

Every condition that still holds once Deliveries have run is checked: all twelve but 11, which holds only
until the first Delivery ((count of ORDER) - (count of NEW-ORDER) = 2100 grows by one per delivered order).
tdebench stores no NULL (see schema.py): an undelivered order has O_CARRIER_ID 0 and its lines OL_DELIVERY_D
1900-01-01 00:00:00, so "null" below means those values, and "delivered" means any other date.

 1. W_YTD = sum(D_YTD), per warehouse.
 2. D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID), per district (NO_O_ID when it has new orders).
 3. max(NO_O_ID) - min(NO_O_ID) + 1 = number of NEW-ORDER rows, per district with new orders.
 4. sum(O_OL_CNT) = number of ORDER-LINE rows, per district.
 5. O_CARRIER_ID is null iff the order has a NEW-ORDER row, per order (and no NEW-ORDER row lacks its order).
 6. O_OL_CNT = number of the order's ORDER-LINE rows, per order (orders with no line at all included).
 7. OL_DELIVERY_D is null iff the order's O_CARRIER_ID is null, per order line (a line without its order
    violates it too).
 8. W_YTD = sum(H_AMOUNT) of the warehouse's HISTORY rows (H_W_ID).
 9. D_YTD = sum(H_AMOUNT) of the district's HISTORY rows (H_W_ID, H_D_ID).
10. C_BALANCE = sum(OL_AMOUNT of the customer's delivered lines) - sum(H_AMOUNT of the customer's HISTORY
    rows: H_C_W_ID, H_C_D_ID, H_C_ID), per customer.
12. C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of the customer's delivered lines), per customer.

The initial population satisfies all of them: C_BALANCE -10.00, C_YTD_PAYMENT 10.00, one HISTORY row of 10.00
per customer, and the delivered orders' lines have OL_AMOUNT 0.00 (clause 4.3.3.1).

Cost: ten set-based statements over whole tables (GROUP BY, joins on keys) -- never one query per customer
or order. Per-warehouse and per-district figures (1-4, 6 for orders without lines, 8, 9) come back grouped and
are compared here; per-order and per-customer conditions (5-7, 10, 12) are joined in SQL, which returns only
the violating rows. ORDER-LINE is read three times (per district, per order, delivered amounts per
customer). On MariaDB and SQLite the covering history index on the customer (schema.py) lets condition 10
sum HISTORY without reading the table. Money is compared with half a cent of tolerance: SQLite keeps it as REAL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tdebench.api.engine import Connection, Instance
from tdebench.workloads.tpcc.schema import UNDELIVERED_CARRIER, UNDELIVERED_DATE

CONDITIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12)
MAX_EXAMPLES = 20  # violations described per condition; all are counted
_MONEY_TOLERANCE = Decimal("0.005")  # SQLite keeps money as REAL
_TOLERANCE_SQL = "0.005"
_NULL_DATE = f"'{UNDELIVERED_DATE}'"

# 5: undelivered orders without their NEW-ORDER row, NEW-ORDER rows of delivered or missing orders
_UNDELIVERED_WITHOUT_NEW_ORDER = f"""
SELECT o_w_id, o_d_id, o_id FROM orders
WHERE o_carrier_id = {UNDELIVERED_CARRIER}
  AND NOT EXISTS (SELECT 1 FROM new_order WHERE no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id)"""
_NEW_ORDER_NOT_UNDELIVERED = f"""
SELECT no_w_id, no_d_id, no_o_id, o_carrier_id FROM new_order
LEFT JOIN orders ON o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
WHERE o_id IS NULL OR o_carrier_id <> {UNDELIVERED_CARRIER}"""
# 6 and 7: the lines of each order counted (all, undelivered) in one pass over ORDER-LINE, then its order
# looked up by primary key (lines whose order is missing come back with o_carrier_id NULL). Orders with no
# line at all cannot show up here; per-district counts find them (_orders_without_lines).
_LINES_VS_ORDERS = f"""
SELECT l.ol_w_id, l.ol_d_id, l.ol_o_id, o_carrier_id, o_ol_cnt, l.n, l.undelivered
FROM (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) AS n,
             SUM(CASE WHEN ol_delivery_d = {_NULL_DATE} THEN 1 ELSE 0 END) AS undelivered
      FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l
LEFT JOIN orders ON o_w_id = l.ol_w_id AND o_d_id = l.ol_d_id AND o_id = l.ol_o_id
WHERE o_id IS NULL OR l.n <> o_ol_cnt
   OR (o_carrier_id = {UNDELIVERED_CARRIER} AND l.undelivered <> l.n)
   OR (o_carrier_id <> {UNDELIVERED_CARRIER} AND l.undelivered <> 0)"""
# 10 and 12: each customer with the amounts of its delivered lines and of its history
_CUSTOMER_BALANCES = f"""
SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, COALESCE(d.amount, 0), COALESCE(h.amount, 0)
FROM customer
LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, SUM(ol_amount) AS amount
           FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
           WHERE ol_delivery_d <> {_NULL_DATE}
           GROUP BY o_w_id, o_d_id, o_c_id) d
  ON d.o_w_id = c_w_id AND d.o_d_id = c_d_id AND d.o_c_id = c_id
LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) AS amount
           FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id) h
  ON h.h_c_w_id = c_w_id AND h.h_c_d_id = c_d_id AND h.h_c_id = c_id
WHERE ABS(c_balance - COALESCE(d.amount, 0) + COALESCE(h.amount, 0)) > {_TOLERANCE_SQL}
   OR ABS(c_balance + c_ytd_payment - COALESCE(d.amount, 0)) > {_TOLERANCE_SQL}"""

# every statement the check runs, by what it reads (benchmarks/tpcc_consistency.py times each)
STATEMENTS = {
    "warehouse": "SELECT w_id, w_ytd FROM warehouse",
    "district": "SELECT d_w_id, d_id, d_next_o_id, d_ytd FROM district",
    "orders per district": "SELECT o_w_id, o_d_id, MAX(o_id), SUM(o_ol_cnt), COUNT(*) FROM orders "
                           "GROUP BY o_w_id, o_d_id",
    "new orders per district": "SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM new_order "
                               "GROUP BY no_w_id, no_d_id",
    "order lines per district": "SELECT ol_w_id, ol_d_id, COUNT(*), COUNT(DISTINCT ol_o_id) FROM order_line "
                                "GROUP BY ol_w_id, ol_d_id",
    "history per district": "SELECT h_w_id, h_d_id, SUM(h_amount) FROM history GROUP BY h_w_id, h_d_id",
    "undelivered orders without new order": _UNDELIVERED_WITHOUT_NEW_ORDER,
    "new orders not undelivered": _NEW_ORDER_NOT_UNDELIVERED,
    "lines vs orders": _LINES_VS_ORDERS,
    "customer balances": _CUSTOMER_BALANCES,
}


@dataclass
class Violations:
    """The violations of one condition: how many, and the first few described."""

    count: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, text: str, count: int = 1) -> None:
        self.count += count
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(text)

    def __bool__(self) -> bool:
        return self.count > 0

    def summary(self, shown: int = 3) -> str:
        """The first ``shown`` examples, and the count when there are more violations than that."""
        text = "; ".join(self.examples[:shown])
        return text + (f" ... ({self.count} in all)" if self.count > min(shown, len(self.examples)) else "")


def _money(value: Any) -> Decimal:
    return Decimal(str(value if value is not None else 0))


def _differ(a: Any, b: Any) -> bool:
    return abs(_money(a) - _money(b)) > _MONEY_TOLERANCE


def _rows(conn: Connection, sql: str, keys: int = 2) -> dict[tuple[int, ...], tuple[Any, ...]]:
    """Result rows keyed by their first ``keys`` columns (warehouse, district)."""
    cur = conn.cursor()
    cur.execute(sql)
    return {tuple(int(v) for v in row[:keys]): tuple(row[keys:]) for row in cur.fetchall()}


def _each(conn: Connection, sql: str) -> Any:
    """The rows of ``sql`` one by one (violations only: usually none)."""
    cur = conn.cursor()
    cur.execute(sql)
    while True:
        batch = cur.fetchmany(1000)
        if not batch:
            return
        yield from batch


Grouped = dict[tuple[int, ...], tuple[Any, ...]]


def _by_warehouse(rows: Grouped, column: int) -> dict[int, Decimal]:
    """Per-district money in ``column`` summed per warehouse."""
    out: dict[int, Decimal] = {}
    for key, values in rows.items():
        out[key[0]] = out.get(key[0], Decimal(0)) + _money(values[column])
    return out


def _grouped(conn: Connection) -> dict[str, Grouped]:
    """The per-warehouse and per-district statements' rows, keyed by (warehouse[, district])."""
    return {name: _rows(conn, STATEMENTS[name], keys=1 if name == "warehouse" else 2)
            for name in ("warehouse", "district", "orders per district", "new orders per district",
                         "order lines per district", "history per district")}


def _warehouses(g: dict[str, Grouped], out: dict[str, Violations]) -> None:
    """Conditions 1 and 8: W_YTD against the districts' D_YTD and against the warehouse's history."""
    d_ytd, paid = _by_warehouse(g["district"], 1), _by_warehouse(g["history per district"], 0)
    for (w,), (w_ytd,) in sorted(g["warehouse"].items()):
        if _differ(w_ytd, d_ytd.get(w, 0)):
            out["condition_1"].add(f"warehouse {w}: W_YTD {w_ytd} != sum(D_YTD) {d_ytd.get(w, 0)}")
        if _differ(w_ytd, paid.get(w, 0)):
            out["condition_8"].add(f"warehouse {w}: W_YTD {w_ytd} != sum(H_AMOUNT) {paid.get(w, 0)}")


def _districts(g: dict[str, Grouped], out: dict[str, Violations]) -> None:
    """Conditions 2, 3, 4 and 9, per district."""
    for key, (next_o_id, d_ytd) in sorted(g["district"].items()):
        where = f"warehouse {key[0]} district {key[1]}"
        max_o, ol_sum, _ = g["orders per district"].get(key, (0, 0, 0))
        no = g["new orders per district"].get(key)
        if int(next_o_id) - 1 != int(max_o or 0) or (no is not None and int(no[0]) != int(max_o or 0)):
            out["condition_2"].add(f"{where}: D_NEXT_O_ID-1 {int(next_o_id) - 1}, max(O_ID) {max_o}, "
                                   f"max(NO_O_ID) {no[0] if no else '-'}")
        if no is not None and int(no[0]) - int(no[1]) + 1 != int(no[2]):
            out["condition_3"].add(f"{where}: max(NO_O_ID)-min(NO_O_ID)+1 = {int(no[0]) - int(no[1]) + 1}, "
                                   f"{no[2]} NEW_ORDER rows")
        lines = int(g["order lines per district"].get(key, (0, 0))[0])
        if int(ol_sum or 0) != lines:
            out["condition_4"].add(f"{where}: sum(O_OL_CNT) {ol_sum} != {lines} ORDER_LINE rows")
        h_sum = _money(g["history per district"].get(key, (0,))[0])
        if _differ(d_ytd, h_sum):
            out["condition_9"].add(f"{where}: D_YTD {d_ytd} != sum(H_AMOUNT) {h_sum}")


def _orders(conn: Connection, out: dict[str, Violations]) -> dict[tuple[int, int], int]:
    """Conditions 5, 6 and 7, per order and order line; returns the orders missing per district (lines
    whose ORDER row does not exist)."""
    for w, d, o in _each(conn, STATEMENTS["undelivered orders without new order"]):
        out["condition_5"].add(f"order {w}/{d}/{o}: O_CARRIER_ID null (0) but no NEW-ORDER row")
    for w, d, o, carrier in _each(conn, STATEMENTS["new orders not undelivered"]):
        what = "no ORDER row" if carrier is None else f"O_CARRIER_ID {carrier}"
        out["condition_5"].add(f"order {w}/{d}/{o}: NEW-ORDER row but {what}")
    missing: dict[tuple[int, int], int] = {}
    for w, d, o, carrier, ol_cnt, n, undelivered in _each(conn, STATEMENTS["lines vs orders"]):
        n, undelivered = int(n), int(undelivered or 0)
        if carrier is None:
            missing[(int(w), int(d))] = missing.get((int(w), int(d)), 0) + 1
            out["condition_7"].add(f"order {w}/{d}/{o}: {n} ORDER-LINE row(s) but no ORDER row", count=n)
            continue
        if n != int(ol_cnt):
            out["condition_6"].add(f"order {w}/{d}/{o}: O_OL_CNT {ol_cnt} != {n} ORDER-LINE rows")
        wrong = n - undelivered if int(carrier) == UNDELIVERED_CARRIER else undelivered
        if wrong:
            state = ("null (0)", "a date") if int(carrier) == UNDELIVERED_CARRIER else (str(carrier), "null")
            out["condition_7"].add(f"order {w}/{d}/{o}: O_CARRIER_ID {state[0]} but {wrong} line(s) with "
                                   f"OL_DELIVERY_D {state[1]}", count=wrong)
    return missing


def _orders_without_lines(g: dict[str, Grouped], missing: dict[tuple[int, int], int],
                          out: dict[str, Violations]) -> None:
    """Condition 6 for orders with no ORDER-LINE row at all: a district has more orders than order numbers
    among its lines (less those whose order is missing)."""
    for key, (_, _, orders) in sorted(g["orders per district"].items()):
        with_lines = int(g["order lines per district"].get(key, (0, 0))[1]) - missing.get(key, 0)
        if int(orders) > with_lines:
            out["condition_6"].add(f"warehouse {key[0]} district {key[1]}: {int(orders) - with_lines} order(s) "
                                   "with no ORDER-LINE row", count=int(orders) - with_lines)


def _customers(conn: Connection, out: dict[str, Violations]) -> None:
    """Conditions 10 and 12: per customer, joined in SQL."""
    for w, d, c, balance, ytd, delivered, paid in _each(conn, STATEMENTS["customer balances"]):
        where = f"customer {w}/{d}/{c}"
        balance, ytd, delivered, paid = _money(balance), _money(ytd), _money(delivered), _money(paid)
        if _differ(balance, delivered - paid):
            out["condition_10"].add(f"{where}: C_BALANCE {balance} != delivered OL_AMOUNT {delivered} "
                                    f"- H_AMOUNT {paid}")
        if _differ(balance + ytd, delivered):
            out["condition_12"].add(f"{where}: C_BALANCE + C_YTD_PAYMENT {balance + ytd} != delivered "
                                    f"OL_AMOUNT {delivered}")


def check(conn: Connection, commit: bool = True) -> dict[str, Violations]:
    """Violations per condition (``condition_N`` for N in :data:`CONDITIONS`); reads, then commits."""
    out = {f"condition_{n}": Violations() for n in CONDITIONS}
    grouped = _grouped(conn)
    _warehouses(grouped, out)
    _districts(grouped, out)
    _orders_without_lines(grouped, _orders(conn, out), out)
    _customers(conn, out)
    if commit:
        conn.commit()
    return out


def check_instance(instance: Instance) -> dict[str, Violations]:
    """:func:`check` on a fresh connection."""
    conn = instance.connect()
    try:
        return check(conn)
    finally:
        conn.close()
