-- A star over a derived table whose columns the engine named: they keep those names.
SELECT * FROM (
  SELECT s.store_id, COUNT(*), SUM(s.qty) + 1, MAX(s.price) AS Top
  FROM sales s GROUP BY s.store_id
) x
WHERE x.store_id > 1
