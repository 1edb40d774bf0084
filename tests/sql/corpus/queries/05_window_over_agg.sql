-- Share of each store in its region.
SELECT st.region, s.store_id, SUM(s.price) AS total,
       SUM(s.price) / SUM(SUM(s.price)) OVER (PARTITION BY st.region) AS share
FROM sales s JOIN stores st ON s.store_id = st.store_id
GROUP BY st.region, s.store_id
HAVING SUM(s.price) > 10
