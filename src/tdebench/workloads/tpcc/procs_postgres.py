"""The five transactions as PL/pgSQL functions (one round trip each, as HammerDB's TPROC-C).

Called as ``SELECT tpcc_<kind>(...)`` on an autocommit connection, so each call is one transaction.
New-Order's unused item raises SQLSTATE ``TC001``, which rolls the transaction back (the client counts it
as the intended rollback). Delivery returns the number of districts skipped, the others 0. On pgcrypto
column encryption the functions read and write the decrypting views like any other client.
"""

from __future__ import annotations

ROLLBACK_STATE = "TC001"

_DIST = "CASE p_d_id " + " ".join(f"WHEN {d} THEN s_dist_{d:02d}" for d in range(1, 11)) + " END"

NEW_ORDER = f"""
CREATE OR REPLACE FUNCTION tpcc_new_order(p_w_id int, p_d_id int, p_c_id int, p_items int[], p_supply int[],
                                          p_qty int[], p_all_local int, p_entry timestamp) RETURNS int
LANGUAGE plpgsql AS $fn$
DECLARE
  v_discount numeric; v_last text; v_credit text; v_w_tax numeric; v_d_tax numeric; v_o_id int;
  v_price numeric; v_name text; v_idata text; v_squant int; v_dist text; v_sdata text;
  v_cnt int := array_length(p_items, 1);
BEGIN
  SELECT c_discount, c_last, c_credit, w_tax INTO v_discount, v_last, v_credit, v_w_tax
    FROM customer, warehouse WHERE w_id = p_w_id AND c_w_id = w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  SELECT d_next_o_id, d_tax INTO v_o_id, v_d_tax FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  UPDATE district SET d_next_o_id = v_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
  INSERT INTO orders (o_w_id, o_d_id, o_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    VALUES (p_w_id, p_d_id, v_o_id, p_c_id, p_entry, 0, v_cnt, p_all_local);
  INSERT INTO new_order (no_w_id, no_d_id, no_o_id) VALUES (p_w_id, p_d_id, v_o_id);
  FOR n IN 1 .. v_cnt LOOP
    SELECT i_price, i_name, i_data INTO v_price, v_name, v_idata FROM item WHERE i_id = p_items[n];
    IF NOT FOUND THEN
      RAISE EXCEPTION 'tpcc: item % is not valid', p_items[n] USING ERRCODE = '{ROLLBACK_STATE}';
    END IF;
    SELECT s_quantity, {_DIST}, s_data INTO v_squant, v_dist, v_sdata FROM stock
      WHERE s_i_id = p_items[n] AND s_w_id = p_supply[n] FOR UPDATE;
    UPDATE stock SET s_quantity = CASE WHEN v_squant - p_qty[n] >= 10 THEN v_squant - p_qty[n]
                                       ELSE v_squant - p_qty[n] + 91 END,
      s_ytd = s_ytd + p_qty[n], s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + CASE WHEN p_supply[n] <> p_w_id THEN 1 ELSE 0 END
      WHERE s_i_id = p_items[n] AND s_w_id = p_supply[n];
    INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                            ol_quantity, ol_amount, ol_dist_info)
      VALUES (p_w_id, p_d_id, v_o_id, n, p_items[n], p_supply[n], '1900-01-01 00:00:00', p_qty[n],
              p_qty[n] * v_price, v_dist);
  END LOOP;
  RETURN 0;
END
$fn$"""

_BY_NAME = """
  IF p_c_last IS NOT NULL THEN
    SELECT count(*) INTO v_n FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_c_last;
    SELECT c_id INTO v_c_id FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_c_last
      ORDER BY c_first OFFSET (v_n + 1) / 2 - 1 LIMIT 1;
  END IF;"""

PAYMENT = f"""
CREATE OR REPLACE FUNCTION tpcc_payment(p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int, p_c_id int,
                                        p_c_last text, p_amount numeric, p_date timestamp) RETURNS int
LANGUAGE plpgsql AS $fn$
DECLARE
  v_w_name text; v_d_name text; v_c_id int := p_c_id; v_n int; v_credit text; v_data text; r record;
BEGIN
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO r FROM warehouse WHERE w_id = p_w_id FOR UPDATE;
  v_w_name := r.w_name;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO r FROM district
    WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  v_d_name := r.d_name;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
{_BY_NAME.format(w="p_c_w_id", d="p_c_d_id")}
  SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit,
         c_credit_lim, c_discount, c_balance INTO r
    FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
  IF r.c_credit = 'BC' THEN
    SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
    v_data := substr(concat_ws(' ', v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_amount, '|', v_data), 1, 500);
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
      c_payment_cnt = c_payment_cnt + 1, c_data = v_data
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  ELSE
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
      c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  END IF;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_date, p_amount,
            substr(v_w_name || '    ' || v_d_name, 1, 24));
  RETURN 0;
END
$fn$"""

ORDER_STATUS = f"""
CREATE OR REPLACE FUNCTION tpcc_order_status(p_w_id int, p_d_id int, p_c_id int, p_c_last text) RETURNS int
LANGUAGE plpgsql AS $fn$
DECLARE
  v_c_id int := p_c_id; v_n int; r record; o record; v_lines int := 0;
BEGIN
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
  RETURN 0;
END
$fn$"""

DELIVERY = """
CREATE OR REPLACE FUNCTION tpcc_delivery(p_w_id int, p_carrier int, p_date timestamp) RETURNS int
LANGUAGE plpgsql AS $fn$
DECLARE
  v_o_id int; v_c_id int; v_total numeric; v_skipped int := 0; v_deleted int;
BEGIN
  FOR d IN 1 .. 10 LOOP
    SELECT no_o_id INTO v_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d
      ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF NOT FOUND THEN
      v_skipped := v_skipped + 1;
      CONTINUE;
    END IF;
    DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d AND no_o_id = v_o_id;
    GET DIAGNOSTICS v_deleted = ROW_COUNT;
    IF v_deleted <> 1 THEN
      v_skipped := v_skipped + 1;
      CONTINUE;
    END IF;
    SELECT o_c_id INTO v_c_id FROM orders WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o_id;
    UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o_id;
    UPDATE order_line SET ol_delivery_d = p_date WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id;
    SELECT coalesce(sum(ol_amount), 0) INTO v_total FROM order_line
      WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id;
    PERFORM c_balance FROM customer WHERE c_w_id = p_w_id AND c_d_id = d AND c_id = v_c_id FOR UPDATE;
    UPDATE customer SET c_balance = c_balance + v_total, c_delivery_cnt = c_delivery_cnt + 1
      WHERE c_w_id = p_w_id AND c_d_id = d AND c_id = v_c_id;
  END LOOP;
  RETURN v_skipped;
END
$fn$"""

STOCK_LEVEL = """
CREATE OR REPLACE FUNCTION tpcc_stock_level(p_w_id int, p_d_id int, p_threshold int) RETURNS int
LANGUAGE plpgsql AS $fn$
DECLARE
  v_next int; v_low int;
BEGIN
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT count(DISTINCT s_i_id) INTO v_low FROM order_line, stock
    WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next AND ol_o_id >= v_next - 20
      AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  RETURN 0;
END
$fn$"""

FUNCTIONS = {"new_order": NEW_ORDER, "payment": PAYMENT, "order_status": ORDER_STATUS, "delivery": DELIVERY,
             "stock_level": STOCK_LEVEL}


def install_sql() -> list[str]:
    """CREATE OR REPLACE for every function."""
    return [body.strip() for body in FUNCTIONS.values()]
