-- A CTE used twice in a union, then ranked.
WITH web AS (SELECT s.item_id, s.qty FROM sales s WHERE s.channel = 'web')
SELECT item_id, qty, ROW_NUMBER() OVER (PARTITION BY item_id ORDER BY qty DESC, src) AS rn, src FROM (
  SELECT item_id, qty, 'a' AS src FROM web WHERE qty > 1
  UNION ALL
  SELECT item_id, qty, 'b' AS src FROM web WHERE qty <= 1
) t
