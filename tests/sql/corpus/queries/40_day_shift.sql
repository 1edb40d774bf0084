-- Spark's date_add / date_sub (sqlglot reads both as one day shift): compared across a join, and selected.
SELECT s.sale_id, s.sold_on, date_sub(s.sold_on, 1) AS day_before, st.region
FROM sales s JOIN stores st ON s.store_id = st.store_id
WHERE st.opened <= date_add(s.sold_on, 30) AND date_sub(s.sold_on, 7) > DATE '2020-03-01' AND st.region = 'east'
