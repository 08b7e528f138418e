-- Revenue per month and category (EXTRACT: PostgreSQL and MariaDB; SQLite runs q3_monthly_revenue.sqlite.sql).
SELECT EXTRACT(YEAR FROM o.ordered_at) AS year, EXTRACT(MONTH FROM o.ordered_at) AS month, p.category,
       SUM(l.quantity * l.unit_price) AS revenue, COUNT(DISTINCT o.order_id) AS orders
FROM orders o
JOIN order_lines l ON l.order_id = o.order_id
JOIN products p ON p.product_id = l.product_id
GROUP BY EXTRACT(YEAR FROM o.ordered_at), EXTRACT(MONTH FROM o.ordered_at), p.category
ORDER BY year, month, p.category
