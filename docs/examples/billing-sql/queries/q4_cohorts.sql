-- Accounts per year opened and plan, among those opened 2020-2023.
SELECT EXTRACT(YEAR FROM opened) AS cohort, plan, COUNT(*) AS accounts
FROM accounts
WHERE opened BETWEEN DATE '2020-01-01' AND DATE '2023-12-31'
GROUP BY EXTRACT(YEAR FROM opened), plan
ORDER BY cohort, plan
