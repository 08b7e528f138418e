-- The shop's hottest query: one customer's orders with their totals (the "my orders" page).
SELECT o.order_id, o.ordered_at, o.status, SUM(l.quantity * l.unit_price) AS total
FROM orders o
JOIN order_lines l ON l.order_id = o.order_id
WHERE o.customer_id = 42
GROUP BY o.order_id, o.ordered_at, o.status
ORDER BY o.ordered_at DESC, o.order_id
