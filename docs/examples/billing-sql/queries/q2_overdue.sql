-- Unpaid invoices more than 30 days past due on 2025-06-30, with the reminder date a week after due (interval
-- arithmetic on dates, CAST back to a date, COALESCE for an empty note).
SELECT i.invoice_id, a.name, i.due, CAST(i.due + INTERVAL '7 days' AS DATE) AS reminder,
       COALESCE(i.note, 'no note') AS note, i.amount
FROM invoices i
JOIN accounts a ON a.account_id = i.account_id
WHERE i.paid_at IS NULL AND i.due < DATE '2025-06-30' - INTERVAL '30 days'
ORDER BY i.due, i.invoice_id
