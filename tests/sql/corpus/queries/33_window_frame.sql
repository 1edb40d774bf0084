SELECT s.store_id, s.sold_on, SUM(s.qty) OVER (PARTITION BY s.store_id ORDER BY s.sold_on, s.sale_id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS moving
FROM sales s WHERE s.store_id IN (1, 2)
