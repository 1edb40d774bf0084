-- A filter on a key the grand total and subtotals leave NULL stays above the rollup.
SELECT * FROM (
  SELECT s.channel, s.store_id, SUM(s.qty) AS qty, grouping_id() AS gid
  FROM sales s GROUP BY ROLLUP (s.channel, s.store_id)
) r
WHERE r.store_id = 1 OR r.store_id IS NULL
