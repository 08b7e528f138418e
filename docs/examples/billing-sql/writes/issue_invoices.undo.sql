DELETE FROM invoices WHERE invoice_id > 1000000
