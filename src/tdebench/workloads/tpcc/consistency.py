"""TPC-C consistency conditions 1-4 (clause 3.3.2), checked after every trial.

1. W_YTD = sum(D_YTD) for every warehouse.
2. D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for every district (NO_O_ID when it has new orders).
3. max(NO_O_ID) - min(NO_O_ID) + 1 = number of NEW_ORDER rows, for every district with new orders.
4. sum(O_OL_CNT) = number of ORDER_LINE rows, for every district.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tdebench.api.engine import Connection

_MONEY_TOLERANCE = Decimal("0.005")  # SQLite keeps money as REAL


def _rows(conn: Connection, sql: str, keys: int = 2) -> dict[tuple[int, ...], tuple[Any, ...]]:
    """Result rows keyed by their first ``keys`` columns (warehouse, district)."""
    cur = conn.cursor()
    cur.execute(sql)
    return {tuple(int(v) for v in row[:keys]): tuple(row[keys:]) for row in cur.fetchall()}


def check(conn: Connection, commit: bool = True) -> dict[str, list[str]]:
    """Violations per condition (empty lists when consistent); reads in one transaction, then commits."""
    out: dict[str, list[str]] = {f"condition_{n}": [] for n in range(1, 5)}
    ytd = _rows(conn, "SELECT w_id, w_ytd, (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id) FROM warehouse",
                keys=1)
    for (w,), (w_ytd, d_sum) in ytd.items():
        if abs(Decimal(str(w_ytd)) - Decimal(str(d_sum or 0))) > _MONEY_TOLERANCE:
            out["condition_1"].append(f"warehouse {w}: W_YTD {w_ytd} != sum(D_YTD) {d_sum}")
    districts = _rows(conn, "SELECT d_w_id, d_id, d_next_o_id FROM district")
    orders = _rows(conn, "SELECT o_w_id, o_d_id, MAX(o_id), SUM(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id")
    new_orders = _rows(conn, "SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM new_order "
                             "GROUP BY no_w_id, no_d_id")
    lines = _rows(conn, "SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id")
    if commit:
        conn.commit()
    for key, (next_o_id,) in sorted(districts.items()):
        where = f"warehouse {key[0]} district {key[1]}"
        max_o, ol_sum = orders.get(key, (0, 0))
        no = new_orders.get(key)
        if int(next_o_id) - 1 != int(max_o or 0) or (no is not None and int(no[0]) != int(max_o or 0)):
            out["condition_2"].append(f"{where}: D_NEXT_O_ID-1 {int(next_o_id) - 1}, max(O_ID) {max_o}, "
                                      f"max(NO_O_ID) {no[0] if no else '-'}")
        if no is not None and int(no[0]) - int(no[1]) + 1 != int(no[2]):
            out["condition_3"].append(f"{where}: max(NO_O_ID)-min(NO_O_ID)+1 = {int(no[0]) - int(no[1]) + 1}, "
                                      f"{no[2]} NEW_ORDER rows")
        if int(ol_sum or 0) != int(lines.get(key, (0,))[0]):
            out["condition_4"].append(f"{where}: sum(O_OL_CNT) {ol_sum} != {lines.get(key, (0,))[0]} ORDER_LINE rows")
    return out


def check_instance(instance: Any) -> dict[str, list[str]]:
    """:func:`check` on a fresh connection."""
    conn = instance.connect()
    try:
        return check(conn)
    finally:
        conn.close()


def table_counts(conn: Connection, tables: tuple[str, ...]) -> dict[str, int]:
    """Rows per table (for the load facts and twin comparison)."""
    cur = conn.cursor()
    out = {}
    for table in tables:
        cur.execute(f"SELECT COUNT(*) FROM {table}")
        out[table] = int(cur.fetchone()[0])
    conn.commit()
    return out
