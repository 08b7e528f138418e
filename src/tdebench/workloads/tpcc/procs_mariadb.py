"""The five transactions as MariaDB stored procedures (one round trip each, as HammerDB's TPROC-C).

Each procedure commits itself and returns no result set (a result costs the client more CPU than the
call), except Delivery, which returns the number of districts it skipped. New-Order's unused item rolls
the transaction back and raises error ``ROLLBACK_ERRNO``, which the client counts as the intended rollback.
Items travel as one fixed-width string: per line 6 digits item, 5 digits supply warehouse, 2 digits
quantity, sorted by item number (locks are taken in that order; the unused item sorts last).
"""

from __future__ import annotations

from tdebench.workloads.tpcc import procs_sql
from tdebench.workloads.tpcc.procs_sql import DIST, block

ITEM_WIDTH = 13
ROLLBACK_ERRNO = 30001

NEW_ORDER = f"""
CREATE PROCEDURE tpcc_new_order(IN p_w_id INT, IN p_d_id INT, IN p_c_id INT, IN p_items VARCHAR(255),
                                IN p_all_local INT, IN p_entry DATETIME)
BEGIN
  DECLARE v_discount DECIMAL(4,4); DECLARE v_last VARCHAR(16); DECLARE v_credit CHAR(2);
  DECLARE v_w_tax DECIMAL(4,4); DECLARE v_d_tax DECIMAL(4,4); DECLARE v_o_id INT;
  DECLARE v_cnt INT DEFAULT LENGTH(p_items) DIV {ITEM_WIDTH}; DECLARE n INT DEFAULT 0;
  DECLARE v_i_id INT; DECLARE v_supply INT; DECLARE v_qty INT; DECLARE v_price DECIMAL(5,2);
  DECLARE v_name VARCHAR(24); DECLARE v_idata VARCHAR(50); DECLARE v_squant INT; DECLARE v_dist CHAR(24);
  DECLARE v_sdata VARCHAR(50); DECLARE v_missing INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_missing = 1;
{block(procs_sql.NEW_ORDER_HEAD, 2)}
  WHILE n < v_cnt DO
    SET v_i_id = CAST(SUBSTRING(p_items, n * {ITEM_WIDTH} + 1, 6) AS UNSIGNED);
    SET v_supply = CAST(SUBSTRING(p_items, n * {ITEM_WIDTH} + 7, 5) AS UNSIGNED);
    SET v_qty = CAST(SUBSTRING(p_items, n * {ITEM_WIDTH} + 12, 2) AS UNSIGNED);
    SET n = n + 1;
    SELECT i_price, i_name, i_data INTO v_price, v_name, v_idata FROM item WHERE i_id = v_i_id;
    IF v_missing = 1 THEN
      ROLLBACK;
      SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {ROLLBACK_ERRNO}, MESSAGE_TEXT = 'tpcc: item number not valid';
    END IF;
    SELECT s_quantity, {DIST}, s_data INTO v_squant, v_dist, v_sdata FROM stock
      WHERE s_i_id = v_i_id AND s_w_id = v_supply FOR UPDATE;
    UPDATE stock SET s_quantity = IF(v_squant - v_qty >= 10, v_squant - v_qty, v_squant - v_qty + 91),
      s_ytd = s_ytd + v_qty, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + (v_supply <> p_w_id)
      WHERE s_i_id = v_i_id AND s_w_id = v_supply;
{block(procs_sql.ORDER_LINE_COLUMNS, 4)}
      VALUES (p_w_id, p_d_id, v_o_id, n, v_i_id, v_supply, '1900-01-01 00:00:00', v_qty, v_qty * v_price, v_dist);
  END WHILE;
  COMMIT;
END"""

# the customer chosen by last name (the middle one of those sorted by first name); {w}, {d}: the parameters
_BY_NAME = """  IF p_c_last IS NOT NULL THEN
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_c_last;
    SET v_n = (v_n + 1) DIV 2 - 1;
    SELECT c_id INTO v_c_id FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_c_last
      ORDER BY c_first LIMIT v_n, 1;
  END IF;"""

PAYMENT = f"""
CREATE PROCEDURE tpcc_payment(IN p_w_id INT, IN p_d_id INT, IN p_c_w_id INT, IN p_c_d_id INT, IN p_c_id INT,
                              IN p_c_last VARCHAR(16), IN p_amount DECIMAL(6,2), IN p_date DATETIME)
BEGIN
  DECLARE v_w_name VARCHAR(10); DECLARE v_d_name VARCHAR(10); DECLARE v_c_id INT DEFAULT p_c_id;
  DECLARE v_street1 VARCHAR(20); DECLARE v_street2 VARCHAR(20); DECLARE v_city VARCHAR(20);
  DECLARE v_state CHAR(2); DECLARE v_zip CHAR(9); DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2);
  DECLARE v_last VARCHAR(16); DECLARE v_phone CHAR(16); DECLARE v_since DATETIME; DECLARE v_credit CHAR(2);
  DECLARE v_limit DECIMAL(12,2); DECLARE v_discount DECIMAL(4,4); DECLARE v_balance DECIMAL(12,2);
  DECLARE v_data VARCHAR(500); DECLARE v_n INT;
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
    INTO v_w_name, v_street1, v_street2, v_city, v_state, v_zip FROM warehouse WHERE w_id = p_w_id FOR UPDATE;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_d_name, v_street1, v_street2, v_city,
    v_state, v_zip FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
{_BY_NAME.format(w="p_c_w_id", d="p_c_d_id")}
{block(procs_sql.PAYMENT_CUSTOMER_COLUMNS, 2)}
    INTO v_first, v_middle, v_last, v_street1, v_street2, v_city, v_state, v_zip, v_phone, v_since, v_credit,
         v_limit, v_discount, v_balance
    FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
{procs_sql.payment_tail("v_credit", "SET v_data = ", "CONCAT(v_w_name, '    ', v_d_name)", True, 2)}
  COMMIT;
END"""

ORDER_STATUS = f"""
CREATE PROCEDURE tpcc_order_status(IN p_w_id INT, IN p_d_id INT, IN p_c_id INT, IN p_c_last VARCHAR(16))
BEGIN
  DECLARE v_c_id INT DEFAULT p_c_id; DECLARE v_n INT; DECLARE v_balance DECIMAL(12,2);
  DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2); DECLARE v_last VARCHAR(16);
  DECLARE v_o_id INT DEFAULT NULL; DECLARE v_carrier INT; DECLARE v_entry DATETIME;
  DECLARE v_lines INT; DECLARE v_amount DECIMAL(12,2); DECLARE v_missing INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_missing = 1;
{_BY_NAME.format(w="p_w_id", d="p_d_id")}
  SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
    FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
  SELECT o_id, o_carrier_id, o_entry_d INTO v_o_id, v_carrier, v_entry FROM orders
    WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id ORDER BY o_id DESC LIMIT 1;
  IF v_o_id IS NOT NULL THEN
    SELECT COUNT(*), SUM(ol_amount + ol_quantity + ol_i_id + ol_supply_w_id), MAX(ol_delivery_d)
      INTO v_lines, v_amount, v_entry FROM order_line
      WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
  END IF;
  COMMIT;
END"""

DELIVERY = f"""
CREATE PROCEDURE tpcc_delivery(IN p_w_id INT, IN p_carrier INT, IN p_date DATETIME)
BEGIN
  DECLARE d INT DEFAULT 0; DECLARE v_o_id INT; DECLARE v_c_id INT; DECLARE v_total DECIMAL(12,2);
  DECLARE v_balance DECIMAL(12,2); DECLARE v_skipped INT DEFAULT 0; DECLARE v_missing INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_missing = 1;
  WHILE d < 10 DO
    SET d = d + 1, v_missing = 0, v_o_id = NULL;
{block(procs_sql.OLDEST_NEW_ORDER, 4)}
    IF v_o_id IS NULL THEN
      SET v_skipped = v_skipped + 1;
    ELSE
      {procs_sql.DELETE_NEW_ORDER}
{procs_sql.deliver_order("SELECT c_balance INTO v_balance", True, 6)}
    END IF;
  END WHILE;
  COMMIT;
  SELECT v_skipped;
END"""

STOCK_LEVEL = f"""
CREATE PROCEDURE tpcc_stock_level(IN p_w_id INT, IN p_d_id INT, IN p_threshold INT)
BEGIN
  DECLARE v_next INT; DECLARE v_low INT;
{procs_sql.stock_level(True)}
  COMMIT;
END"""

PROCEDURES = {"new_order": NEW_ORDER, "payment": PAYMENT, "order_status": ORDER_STATUS, "delivery": DELIVERY,
              "stock_level": STOCK_LEVEL}


def install_sql() -> list[str]:
    """DROP + CREATE for every procedure."""
    out = []
    for kind, body in PROCEDURES.items():
        out += [f"DROP PROCEDURE IF EXISTS tpcc_{kind}", body.strip()]
    return out


def encode_items(items: list[tuple[int, int, int]]) -> str:
    """(item, supply warehouse, quantity) lines as the procedure's fixed-width string."""
    return "".join(f"{i:06d}{w:05d}{q:02d}" for i, w, q in items)
