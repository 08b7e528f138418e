-- Accounts that paid more than two weeks after the due date (a timestamp against a date plus an interval).
SELECT a.account_id, a.city, COUNT(*) AS late, CAST(SUM(i.amount) AS DECIMAL(12,2)) AS late_amount
FROM accounts a
JOIN invoices i ON i.account_id = a.account_id
WHERE i.paid_at > i.due + INTERVAL '14 days'
GROUP BY a.account_id, a.city
ORDER BY late DESC, a.account_id
LIMIT 20
