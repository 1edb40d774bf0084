-- Output names as written: case, unaliased expressions, duplicates.
SELECT st.StateName, s.STORE_ID, st.store_id + 1, s.store_id, COUNT(*), SUM(s.qty) AS Total
FROM sales s JOIN stores st ON s.store_id = st.store_id
GROUP BY st.StateName, st.store_id, s.store_id
