-- Sales by region and state with subtotals and a grand total.
SELECT st.region, st.StateName, SUM(s.qty * s.price) AS revenue, COUNT(*) AS n, GROUPING(st.region) AS g_region
FROM sales s JOIN stores st ON s.store_id = st.store_id
WHERE s.sold_on >= DATE '2020-03-01' AND st.region IS NOT NULL
GROUP BY ROLLUP (st.region, st.StateName)
