-- Unaliased window functions keep the engine's own column names (Spark spells the default frame out)
SELECT s.store_id, s.sale_id,
       RANK() OVER (PARTITION BY s.store_id ORDER BY s.sale_id),
       dense_rank() OVER (ORDER BY s.qty DESC),
       row_number() OVER (PARTITION BY s.store_id ORDER BY s.sale_id, s.item_id),
       SUM(s.qty) OVER (PARTITION BY s.store_id),
       count(*) OVER (),
       avg(s.qty) OVER (PARTITION BY s.store_id ORDER BY s.sale_id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW),
       lag(s.qty) OVER (PARTITION BY s.store_id ORDER BY s.sale_id),
       lead(s.qty, 2) OVER (PARTITION BY s.store_id ORDER BY s.sale_id),
       max(s.qty) OVER (PARTITION BY s.store_id ORDER BY s.sale_id)
FROM sales s JOIN stores st ON s.store_id = st.store_id
WHERE st.region = 'east' AND s.sale_id IS NOT NULL
