"""The statements the MariaDB procedures and the PL/pgSQL functions run word for word, written once.

Parameters are ``p_*``, variables ``v_*``; both languages name them alike. Where the languages differ inside a
shared block (an assignment, a string function), the block leaves a ``{slot}`` for the caller's own text.
"""

from __future__ import annotations

import textwrap

# the district's s_dist_NN column of a stock row
DIST = "CASE p_d_id " + " ".join(f"WHEN {d} THEN s_dist_{d:02d}" for d in range(1, 11)) + " END"

# New-Order before its items: customer, warehouse and district read, the district's next order number taken
NEW_ORDER_HEAD = """
SELECT c_discount, c_last, c_credit, w_tax INTO v_discount, v_last, v_credit, v_w_tax
  FROM customer, warehouse WHERE w_id = p_w_id AND c_w_id = w_id AND c_d_id = p_d_id AND c_id = p_c_id;
SELECT d_next_o_id, d_tax INTO v_o_id, v_d_tax FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
UPDATE district SET d_next_o_id = v_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
INSERT INTO orders (o_w_id, o_d_id, o_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  VALUES (p_w_id, p_d_id, v_o_id, p_c_id, p_entry, 0, v_cnt, p_all_local);
INSERT INTO new_order (no_w_id, no_d_id, no_o_id) VALUES (p_w_id, p_d_id, v_o_id);"""

ORDER_LINE_COLUMNS = """
INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                        ol_quantity, ol_amount, ol_dist_info)"""

PAYMENT_CUSTOMER_COLUMNS = """
SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit,
       c_credit_lim, c_discount, c_balance"""

# Payment after the customer is read: {credit}: its c_credit; {set_data}: v_data becomes {data}; {h_data}: the
# history row's text from {names} (v_w_name, four spaces, v_d_name)
_PAYMENT_TAIL = """
IF {credit} = 'BC' THEN
  SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  {set_data}
  UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
    c_payment_cnt = c_payment_cnt + 1, c_data = v_data
    WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
ELSE
  UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
    c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
END IF;
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
  VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_date, p_amount,
          {h_data});"""

_CUSTOMER_DATA = "{substr}({concat_ws}(' ', v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_amount, '|', v_data), 1, 500)"

# Delivery of district d's oldest new order v_o_id, once its new_order row is deleted ({sum}, {coalesce}: the
# functions as the language spells them)
_DELIVER_ORDER = """
SELECT o_c_id INTO v_c_id FROM orders WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o_id;
UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o_id;
UPDATE order_line SET ol_delivery_d = p_date WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id;
SELECT {coalesce}({sum}(ol_amount), 0) INTO v_total FROM order_line
  WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id;
{read_balance} FROM customer WHERE c_w_id = p_w_id AND c_d_id = d AND c_id = v_c_id FOR UPDATE;
UPDATE customer SET c_balance = c_balance + v_total, c_delivery_cnt = c_delivery_cnt + 1
  WHERE c_w_id = p_w_id AND c_d_id = d AND c_id = v_c_id;"""

DELETE_NEW_ORDER = "DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d AND no_o_id = v_o_id;"

OLDEST_NEW_ORDER = """
SELECT no_o_id INTO v_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d
  ORDER BY no_o_id LIMIT 1 FOR UPDATE;"""

# Stock-Level: the distinct items of the district's last 20 orders whose stock is below p_threshold
_STOCK_LEVEL = """
SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
SELECT {count}(DISTINCT s_i_id) INTO v_low FROM order_line, stock
  WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next AND ol_o_id >= v_next - 20
    AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;"""


def block(text: str, indent: int) -> str:
    """A shared block, its first newline dropped, every line indented by ``indent`` spaces."""
    return textwrap.indent(text.lstrip("\n"), " " * indent)


def payment_tail(credit: str, assign: str, names: str, upper: bool, indent: int) -> str:
    """Payment's customer update and history row: ``credit`` holds c_credit, ``assign`` starts an assignment to
    v_data (``SET v_data = ``, ``v_data := ``), ``names`` the history text before it is cut to 24 characters;
    ``upper``: SUBSTRING and CONCAT_WS as MariaDB spells them, else substr and concat_ws."""
    substr, concat_ws = ("SUBSTRING", "CONCAT_WS") if upper else ("substr", "concat_ws")
    data = _CUSTOMER_DATA.format(substr=substr, concat_ws=concat_ws)
    return block(_PAYMENT_TAIL.format(credit=credit, set_data=assign + data + ";",
                                      h_data=f"{substr}({names}, 1, 24)"), indent)


def deliver_order(read_balance: str, upper: bool, indent: int) -> str:
    """Delivery of one district's order (``read_balance``: the statement's start that locks the customer row)."""
    spelled = {"coalesce": "COALESCE", "sum": "SUM"} if upper else {"coalesce": "coalesce", "sum": "sum"}
    return block(_DELIVER_ORDER.format(read_balance=read_balance, **spelled), indent)


def stock_level(upper: bool) -> str:
    """Stock-Level's two statements."""
    return block(_STOCK_LEVEL.format(count="COUNT" if upper else "count"), 2)
