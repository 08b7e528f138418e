"""The five transactions as PL/pgSQL functions (one round trip each, as HammerDB's TPROC-C).

Called as ``SELECT tpcc_<kind>(...)`` on an autocommit connection, so each call is one transaction.
New-Order's unused item raises SQLSTATE ``TC001``, which rolls the transaction back (the client counts it
as the intended rollback). Delivery returns the number of districts skipped, the others 0. On pgcrypto
column encryption the functions read and write the decrypting views like any other client.
"""

from __future__ import annotations

from tdebench.workloads.tpcc import procs_sql
from tdebench.workloads.tpcc.procs_sql import DIST, block

ROLLBACK_STATE = "TC001"


def _function(signature: str, variables: str, body: str) -> str:
    """A PL/pgSQL function returning int: its name and parameters, the variables it declares, its body."""
    return f"""
CREATE OR REPLACE FUNCTION {signature} RETURNS int
LANGUAGE plpgsql AS $fn$
DECLARE
{block(variables, 2)}
BEGIN{body}
END
$fn$"""


NEW_ORDER = _function("""tpcc_new_order(p_w_id int, p_d_id int, p_c_id int, p_items int[], p_supply int[],
                                          p_qty int[], p_all_local int, p_entry timestamp)""", """
v_discount numeric; v_last text; v_credit text; v_w_tax numeric; v_d_tax numeric; v_o_id int;
v_price numeric; v_name text; v_idata text; v_squant int; v_dist text; v_sdata text;
v_cnt int := array_length(p_items, 1);""", f"""
{block(procs_sql.NEW_ORDER_HEAD, 2)}
  FOR n IN 1 .. v_cnt LOOP
    SELECT i_price, i_name, i_data INTO v_price, v_name, v_idata FROM item WHERE i_id = p_items[n];
    IF NOT FOUND THEN
      RAISE EXCEPTION 'tpcc: item % is not valid', p_items[n] USING ERRCODE = '{ROLLBACK_STATE}';
    END IF;
    SELECT s_quantity, {DIST}, s_data INTO v_squant, v_dist, v_sdata FROM stock
      WHERE s_i_id = p_items[n] AND s_w_id = p_supply[n] FOR UPDATE;
    UPDATE stock SET s_quantity = CASE WHEN v_squant - p_qty[n] >= 10 THEN v_squant - p_qty[n]
                                       ELSE v_squant - p_qty[n] + 91 END,
      s_ytd = s_ytd + p_qty[n], s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + CASE WHEN p_supply[n] <> p_w_id THEN 1 ELSE 0 END
      WHERE s_i_id = p_items[n] AND s_w_id = p_supply[n];
{block(procs_sql.ORDER_LINE_COLUMNS, 4)}
      VALUES (p_w_id, p_d_id, v_o_id, n, p_items[n], p_supply[n], '1900-01-01 00:00:00', p_qty[n],
              p_qty[n] * v_price, v_dist);
  END LOOP;
  RETURN 0;""")

_BY_NAME = """
  IF p_c_last IS NOT NULL THEN
    SELECT count(*) INTO v_n FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_c_last;
    SELECT c_id INTO v_c_id FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_c_last
      ORDER BY c_first OFFSET (v_n + 1) / 2 - 1 LIMIT 1;
  END IF;"""

PAYMENT = _function("""tpcc_payment(p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int, p_c_id int,
                                        p_c_last text, p_amount numeric, p_date timestamp)""",
                    "v_w_name text; v_d_name text; v_c_id int := p_c_id; v_n int; v_credit text; v_data text; "
                    "r record;", f"""
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO r FROM warehouse WHERE w_id = p_w_id FOR UPDATE;
  v_w_name := r.w_name;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO r FROM district
    WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  v_d_name := r.d_name;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
{_BY_NAME.format(w="p_c_w_id", d="p_c_d_id")}
{block(procs_sql.PAYMENT_CUSTOMER_COLUMNS, 2)} INTO r
    FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
{procs_sql.payment_tail("r.c_credit", "v_data := ", "v_w_name || '    ' || v_d_name", False, 2)}
  RETURN 0;""")

ORDER_STATUS = _function("tpcc_order_status(p_w_id int, p_d_id int, p_c_id int, p_c_last text)",
                         "v_c_id int := p_c_id; v_n int; r record; o record; v_lines int := 0;", f"""
{_BY_NAME.format(w="p_w_id", d="p_d_id")}
  SELECT c_balance, c_first, c_middle, c_last INTO r FROM customer
    WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
  SELECT o_id, o_carrier_id, o_entry_d INTO o FROM orders
    WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id ORDER BY o_id DESC LIMIT 1;
  IF FOUND THEN
    FOR r IN SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
             WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = o.o_id LOOP
      v_lines := v_lines + 1;
    END LOOP;
  END IF;
  RETURN 0;""")

DELIVERY = _function("tpcc_delivery(p_w_id int, p_carrier int, p_date timestamp)",
                     "v_o_id int; v_c_id int; v_total numeric; v_skipped int := 0; v_deleted int;", f"""
  FOR d IN 1 .. 10 LOOP
{block(procs_sql.OLDEST_NEW_ORDER, 4)}
    IF NOT FOUND THEN
      v_skipped := v_skipped + 1;
      CONTINUE;
    END IF;
    {procs_sql.DELETE_NEW_ORDER}
    GET DIAGNOSTICS v_deleted = ROW_COUNT;
    IF v_deleted <> 1 THEN
      v_skipped := v_skipped + 1;
      CONTINUE;
    END IF;
{procs_sql.deliver_order("PERFORM c_balance", False, 4)}
  END LOOP;
  RETURN v_skipped;""")

STOCK_LEVEL = _function("tpcc_stock_level(p_w_id int, p_d_id int, p_threshold int)", "v_next int; v_low int;", f"""
{procs_sql.stock_level(False)}
  RETURN 0;""")

FUNCTIONS = {"new_order": NEW_ORDER, "payment": PAYMENT, "order_status": ORDER_STATUS, "delivery": DELIVERY,
             "stock_level": STOCK_LEVEL}


def install_sql() -> list[str]:
    """CREATE OR REPLACE for every function."""
    return [body.strip() for body in FUNCTIONS.values()]
