-- Paid orders not shipped yet, oldest first (the warehouse's pick list).
SELECT o.order_id, o.ordered_at, c.name, o.ship_address
FROM orders o
JOIN customers c ON c.customer_id = o.customer_id
WHERE o.status = 'paid' AND o.shipped_on IS NULL
ORDER BY o.ordered_at, o.order_id
LIMIT 50
