-- Month-end run: a copy of January 2025's invoices issued a year later, due 30 days after issue.
INSERT INTO invoices (invoice_id, account_id, issued, due, paid_at, amount, note)
SELECT invoice_id + 1000000, account_id, CAST(issued + INTERVAL '1 year' AS DATE),
       CAST(issued + INTERVAL '1 year' + INTERVAL '30 days' AS DATE), NULL, amount, COALESCE(note, 'month-end run')
FROM invoices
WHERE issued >= DATE '2025-01-01' AND issued < DATE '2025-02-01'
