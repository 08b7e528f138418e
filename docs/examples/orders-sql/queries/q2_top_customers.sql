-- Top ten customers by revenue in the first half of 2024.
SELECT c.customer_id, c.name, c.country, SUM(l.quantity * l.unit_price) AS revenue
FROM customers c
JOIN orders o ON o.customer_id = c.customer_id
JOIN order_lines l ON l.order_id = o.order_id
WHERE o.ordered_at >= '2024-01-01' AND o.ordered_at < '2024-07-01'
GROUP BY c.customer_id, c.name, c.country
ORDER BY revenue DESC, c.customer_id
LIMIT 10
