-- A burst of 200 new orders (copies of the first 200, with new ids) and their lines, in one transaction.
INSERT INTO orders (order_id, customer_id, ordered_at, status, shipped_on, ship_address)
SELECT order_id + 1000000, customer_id, ordered_at, 'new', NULL, ship_address
FROM orders WHERE order_id <= 200;

INSERT INTO order_lines (order_id, line_no, product_id, quantity, unit_price)
SELECT order_id + 1000000, line_no, product_id, quantity, unit_price
FROM order_lines WHERE order_id <= 200;
