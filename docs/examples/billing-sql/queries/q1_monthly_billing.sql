-- Invoiced per month of 2025 (EXTRACT and DATE literals).
SELECT EXTRACT(YEAR FROM i.issued) AS year, EXTRACT(MONTH FROM i.issued) AS month,
       COUNT(*) AS invoices, SUM(i.amount) AS billed
FROM invoices i
WHERE i.issued >= DATE '2025-01-01' AND i.issued < DATE '2026-01-01'
GROUP BY EXTRACT(YEAR FROM i.issued), EXTRACT(MONTH FROM i.issued)
ORDER BY year, month
