-- SQLite has no EXTRACT: its dates are text, read with strftime.
SELECT CAST(strftime('%Y', o.ordered_at) AS INTEGER) AS year, CAST(strftime('%m', o.ordered_at) AS INTEGER) AS month,
       p.category, SUM(l.quantity * l.unit_price) AS revenue, COUNT(DISTINCT o.order_id) AS orders
FROM orders o
JOIN order_lines l ON l.order_id = o.order_id
JOIN products p ON p.product_id = l.product_id
GROUP BY 1, 2, p.category
ORDER BY year, month, p.category
