-- Customer search by city and sign-up date (no index: every row is read, and decrypted under column encryption).
SELECT customer_id, name, email, signed_up
FROM customers
WHERE city = 'Lyon' AND signed_up >= '2021-01-01'
ORDER BY name, customer_id
