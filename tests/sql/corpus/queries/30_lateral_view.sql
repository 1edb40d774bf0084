-- LATERAL VIEW explode: a generate node, a barrier (filters stay on their side); DuckDB gets CROSS JOIN UNNEST
SELECT s.sale_id, st.region, x
FROM sales s JOIN stores st ON s.store_id = st.store_id
LATERAL VIEW explode(array(s.qty, s.store_id)) e AS x
WHERE st.region = 'east' AND x > 2
