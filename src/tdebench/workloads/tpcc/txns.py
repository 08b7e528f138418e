"""The five TPC-C transactions (clauses 2.4-2.8): their inputs and their SQL.

Inputs are drawn before a transaction starts, so a retry after a deadlock repeats the same work.
Round trips are kept low the way a careful application would: New-Order reads its items and stock
rows with IN lists and writes its order lines in one INSERT. A row is always locked
(SELECT ... FOR UPDATE) before a relative UPDATE of it, which keeps PostgreSQL's decrypting views
(column encryption) free of lost updates and is the same statement sequence for every twin. These
client-side statements run with ``mode = statements`` (always on SQLite); see procs.py for the default.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from decimal import Decimal

from tdebench.workloads.tpcc import schema
from tdebench.workloads.tpcc.rand import DISTRICTS, ITEMS, TpccRandom
from tdebench.workloads.tpcc.session import Session

NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL = (
    "new_order", "payment", "order_status", "delivery", "stock_level")
KINDS = (NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL)
MIX = {NEW_ORDER: 45, PAYMENT: 43, ORDER_STATUS: 4, DELIVERY: 4, STOCK_LEVEL: 4}  # cards per 100-card deck
WRITES = frozenset({NEW_ORDER, PAYMENT, DELIVERY})
INVALID_ITEM = ITEMS + 1
CENTS = Decimal("0.01")


class Rollback(Exception):
    """New-Order's intended rollback (an unused item number, 1% of New-Orders)."""


@dataclass(frozen=True)
class Terminal:
    """Who runs transactions: the home warehouse and how many warehouses exist."""

    w_id: int
    warehouses: int


@dataclass
class Inputs:
    """One transaction's input data."""

    kind: str
    d_id: int = 0
    c_id: int = 0
    c_last: str | None = None
    c_w_id: int = 0
    c_d_id: int = 0
    amount: Decimal = Decimal(0)
    items: list[tuple[int, int, int]] = field(default_factory=list)  # (i_id, supply_w_id, quantity)
    carrier: int = 0
    threshold: int = 0


def now_text() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")


def _other_warehouse(r: TpccRandom, t: Terminal) -> int:
    other = r.uniform_int(1, t.warehouses - 1)
    return other + 1 if other >= t.w_id else other


def draw(kind: str, r: TpccRandom, t: Terminal) -> Inputs:
    """Random inputs of one transaction of ``kind`` for terminal ``t``."""
    x = Inputs(kind, d_id=r.uniform_int(1, DISTRICTS))
    if kind == NEW_ORDER:
        x.c_id = r.customer_id()
        seen: set[int] = set()
        rnd = r.rng.random
        for _ in range(r.uniform_int(5, 15)):
            i_id = r.item_id()
            while i_id in seen:
                i_id = r.item_id()
            seen.add(i_id)
            remote = t.warehouses > 1 and rnd() < 0.01
            x.items.append((i_id, _other_warehouse(r, t) if remote else t.w_id, 1 + int(rnd() * 10)))
        if r.uniform_int(1, 100) == 1:
            x.items[-1] = (INVALID_ITEM, *x.items[-1][1:])
        x.items.sort()  # locks in item order (fewer deadlocks); the unused item number sorts last
    elif kind in (PAYMENT, ORDER_STATUS):
        x.c_w_id, x.c_d_id = t.w_id, x.d_id
        if kind == PAYMENT:
            x.amount = Decimal(r.uniform_int(100, 500000)) / 100
            if t.warehouses > 1 and r.uniform_int(1, 100) > 85:
                x.c_w_id, x.c_d_id = _other_warehouse(r, t), r.uniform_int(1, DISTRICTS)
        if r.uniform_int(1, 100) <= 60:
            x.c_last = r.last_name_run()
        else:
            x.c_id = r.customer_id()
    elif kind == DELIVERY:
        x.carrier = r.uniform_int(1, 10)
    elif kind == STOCK_LEVEL:
        x.threshold = r.uniform_int(10, 20)
    return x


# transactions ------------------------------------------------------------------------------------
def new_order(s: Session, t: Terminal, x: Inputs) -> None:
    """Clause 2.4: one order of 5-15 lines; Rollback for the unused item number."""
    w, d = t.w_id, x.d_id
    s.one("SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse "
          "WHERE w_id = %s AND c_w_id = w_id AND c_d_id = %s AND c_id = %s", (w, d, x.c_id))
    next_o_id, _d_tax = s.one("SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = %s AND d_id = %s{fu}", (w, d))
    o_id = int(next_o_id)
    s.run("UPDATE district SET d_next_o_id = %s WHERE d_w_id = %s AND d_id = %s", (o_id + 1, w, d))
    all_local = int(all(sw == w for _, sw, _ in x.items))
    s.run("INSERT INTO orders (o_w_id, o_d_id, o_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) "
          "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
          (w, d, o_id, x.c_id, now_text(), schema.UNDELIVERED_CARRIER, len(x.items), all_local))
    s.run("INSERT INTO new_order (no_w_id, no_d_id, no_o_id) VALUES (%s, %s, %s)", (w, d, o_id))
    ids = sorted({i for i, _, _ in x.items})
    marks = ", ".join(["%s"] * len(ids))
    items = {int(r[0]): r for r in s.rows(f"SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({marks})",
                                          ids)}
    stock = _update_stock(s, t, d, [it for it in x.items if it[0] in items])
    lines = []
    for number, (i_id, supply, qty) in enumerate(x.items, start=1):
        if i_id not in items:
            continue
        amount = (Decimal(str(items[i_id][1])) * qty).quantize(CENTS)
        lines.append((w, d, o_id, number, i_id, supply, schema.UNDELIVERED_DATE, qty, s.money(amount),
                      stock[(supply, i_id)][0]))
    if len(items) < len(ids):
        raise Rollback()
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"] * len(lines))
    s.run("INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, "
          f"ol_quantity, ol_amount, ol_dist_info) VALUES {values}", [v for line in lines for v in line])


def _update_stock(s: Session, t: Terminal, d_id: int, items: list[tuple[int, int, int]]
                  ) -> dict[tuple[int, int], tuple[str, str]]:
    """Lock, read and update the stock rows of the order's items, one statement pair per supply warehouse."""
    out: dict[tuple[int, int], tuple[str, str]] = {}
    by_w: dict[int, list[tuple[int, int]]] = {}
    for i_id, supply, qty in items:
        by_w.setdefault(supply, []).append((i_id, qty))
    for supply in sorted(by_w):
        wanted = dict(by_w[supply])
        ids = sorted(wanted)
        marks = ", ".join(["%s"] * len(ids))
        rows = s.rows(f"SELECT s_i_id, s_quantity, s_dist_{d_id:02d}, s_data FROM stock "
                      f"WHERE s_w_id = %s AND s_i_id IN ({marks}) ORDER BY s_i_id{{fu}}", [supply, *ids])
        quantity_case, ytd_case, params_q, params_y = [], [], [], []
        for i_id, s_quantity, s_dist, s_data in rows:
            i_id, qty = int(i_id), wanted[int(i_id)]
            left = int(s_quantity) - qty
            new_q = left if left >= 10 else left + 91
            quantity_case.append("WHEN %s THEN %s")
            params_q += [i_id, new_q]
            ytd_case.append("WHEN %s THEN %s")
            params_y += [i_id, qty]
            out[(supply, i_id)] = (str(s_dist), str(s_data))
        remote = int(supply != t.w_id)
        s.run(f"UPDATE stock SET s_quantity = CASE s_i_id {' '.join(quantity_case)} END, "
              f"s_ytd = s_ytd + CASE s_i_id {' '.join(ytd_case)} END, s_order_cnt = s_order_cnt + 1, "
              f"s_remote_cnt = s_remote_cnt + {remote} WHERE s_w_id = %s AND s_i_id IN ({marks})",
              [*params_q, *params_y, supply, *ids])
    return out


def _customer_by_name(s: Session, w: int, d: int, last: str) -> int:
    """The customer at position ceil(n/2) of those named ``last``, sorted by first name (clause 2.5.2.2)."""
    ids = s.rows("SELECT c_id FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_last = %s ORDER BY c_first",
                 (w, d, last))
    if not ids:
        raise LookupError(f"no customer named {last} in warehouse {w} district {d}")
    return int(ids[(len(ids) + 1) // 2 - 1][0])


def payment(s: Session, t: Terminal, x: Inputs) -> None:
    """Clause 2.5: the warehouse, district and customer pay; a history row is written."""
    w, d, amount = t.w_id, x.d_id, s.money(x.amount)
    w_name = s.one("SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse "
                   "WHERE w_id = %s{fu}", (w,))[0]
    s.run("UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %s", (amount, w))
    d_name = s.one("SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district "
                   "WHERE d_w_id = %s AND d_id = %s{fu}", (w, d))[0]
    s.run("UPDATE district SET d_ytd = d_ytd + %s WHERE d_w_id = %s AND d_id = %s", (amount, w, d))
    c_id = _customer_by_name(s, x.c_w_id, x.c_d_id, x.c_last) if x.c_last else x.c_id
    key = (x.c_w_id, x.c_d_id, c_id)
    row = s.one("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, "
                "c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer "
                "WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s{fu}", key)
    if str(row[10]) == "BC":
        c_data = str(s.one("SELECT c_data FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s", key)[0])
        c_data = f"{c_id} {x.c_d_id} {x.c_w_id} {d} {w} {x.amount} | {c_data}"[:500]
        s.run("UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s, "
              "c_payment_cnt = c_payment_cnt + 1, c_data = %s WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
              (amount, amount, c_data, *key))
    else:
        s.run("UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s, "
              "c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
              (amount, amount, *key))
    s.run("INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) "
          "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
          (c_id, x.c_d_id, x.c_w_id, d, w, now_text(), amount, f"{w_name}    {d_name}"[:24]))


def order_status(s: Session, t: Terminal, x: Inputs) -> None:
    """Clause 2.6: a customer's balance, last order and its lines (read-only)."""
    w, d = t.w_id, x.d_id
    c_id = _customer_by_name(s, w, d, x.c_last) if x.c_last else x.c_id
    s.one("SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
          (w, d, c_id))
    order = s.one("SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = %s AND o_d_id = %s "
                  "AND o_c_id = %s ORDER BY o_id DESC LIMIT 1", (w, d, c_id))
    if order is not None:
        s.rows("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "
               "WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id = %s", (w, d, int(order[0])))


def delivery(s: Session, t: Terminal, x: Inputs) -> int:
    """Clause 2.7: deliver the oldest new order of each district (one transaction); returns districts skipped."""
    w, skipped, when = t.w_id, 0, now_text()
    for d in range(1, DISTRICTS + 1):
        row = s.one("SELECT no_o_id FROM new_order WHERE no_w_id = %s AND no_d_id = %s "
                    "ORDER BY no_o_id LIMIT 1{fu}", (w, d))
        if row is None:
            skipped += 1
            continue
        o_id = int(row[0])
        if not s.delete_found("DELETE FROM new_order WHERE no_w_id = %s AND no_d_id = %s AND no_o_id = %s",
                              (w, d, o_id)):
            skipped += 1
            continue
        c_id = int(s.one("SELECT o_c_id FROM orders WHERE o_w_id = %s AND o_d_id = %s AND o_id = %s",
                         (w, d, o_id))[0])
        s.run("UPDATE orders SET o_carrier_id = %s WHERE o_w_id = %s AND o_d_id = %s AND o_id = %s",
              (x.carrier, w, d, o_id))
        s.run("UPDATE order_line SET ol_delivery_d = %s WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id = %s",
              (when, w, d, o_id))
        total = s.one("SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id = %s",
                      (w, d, o_id))[0]
        s.one("SELECT c_balance FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s{fu}", (w, d, c_id))
        s.run("UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1 "
              "WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
              (s.money(Decimal(str(total or 0)).quantize(CENTS)), w, d, c_id))
    return skipped


def stock_level(s: Session, t: Terminal, x: Inputs) -> None:
    """Clause 2.8: distinct items of the district's last 20 orders with stock below a threshold (read-only)."""
    w, d = t.w_id, x.d_id
    next_o_id = int(s.one("SELECT d_next_o_id FROM district WHERE d_w_id = %s AND d_id = %s", (w, d))[0])
    s.one("SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = %s AND ol_d_id = %s "
          "AND ol_o_id < %s AND ol_o_id >= %s AND s_w_id = %s AND s_i_id = ol_i_id AND s_quantity < %s",
          (w, d, next_o_id, next_o_id - 20, w, x.threshold))


RUNNERS = {NEW_ORDER: new_order, PAYMENT: payment, ORDER_STATUS: order_status, DELIVERY: delivery,
           STOCK_LEVEL: stock_level}
