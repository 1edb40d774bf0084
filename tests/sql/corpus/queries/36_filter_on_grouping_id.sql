-- Filters on the grouping id and on an aggregate stay above; one on every set's key goes below.
SELECT * FROM (
  SELECT s.channel, s.store_id, COUNT(*) AS n, GROUPING(s.store_id) AS g_store
  FROM sales s GROUP BY s.channel, ROLLUP (s.store_id)
) r
WHERE r.g_store = 1 AND r.n > 2 AND r.channel <> 'web'
