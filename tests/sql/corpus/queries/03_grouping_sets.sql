-- Two groupings in one pass; the outer filter names a column of every set.
SELECT * FROM (
  SELECT s.store_id, s.channel, SUM(s.qty) AS qty
  FROM sales s
  GROUP BY GROUPING SETS ((s.store_id, s.channel), (s.store_id))
) g
WHERE g.store_id > 2
