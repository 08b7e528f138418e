-- When payments arrive, in the billing office's time zone two hours behind (interval arithmetic on timestamps).
SELECT EXTRACT(HOUR FROM paid_at - INTERVAL '2 hours') AS hour, COUNT(*) AS payments
FROM invoices
WHERE paid_at IS NOT NULL AND paid_at >= TIMESTAMP '2025-01-01 00:00:00'
GROUP BY EXTRACT(HOUR FROM paid_at - INTERVAL '2 hours')
ORDER BY hour
