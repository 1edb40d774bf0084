-- Unaliased scalar subqueries in the select list: Spark names them scalarsubquery(<outer columns>),
-- DuckDB by their text
SELECT st.store_id,
       (SELECT max(s.qty) FROM sales s WHERE s.store_id = st.store_id),
       (SELECT count(*) FROM items)
FROM stores st
WHERE st.region = 'east'
