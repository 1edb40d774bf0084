-- A CTE with windows over aggregates, referenced three times with self joins.
WITH monthly AS (
  SELECT s.store_id, month(s.sold_on) AS m, SUM(s.qty) AS sum_qty,
         AVG(SUM(s.qty)) OVER (PARTITION BY s.store_id) AS avg_qty,
         RANK() OVER (PARTITION BY s.store_id ORDER BY SUM(s.qty) DESC) AS rnk
  FROM sales s
  WHERE s.sold_on IS NOT NULL
  GROUP BY s.store_id, month(s.sold_on)
)
SELECT cur.store_id, cur.m, cur.sum_qty, prev.sum_qty AS prev_qty, nxt.sum_qty AS next_qty, cur.rnk
FROM monthly cur
JOIN monthly prev ON cur.store_id = prev.store_id AND cur.m = prev.m + 1
JOIN monthly nxt ON cur.store_id = nxt.store_id AND cur.m = nxt.m - 1
WHERE cur.avg_qty > 0 AND cur.store_id < 5
