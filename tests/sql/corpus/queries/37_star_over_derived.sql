-- A star over a derived table whose columns the engine named: they keep those names.
SELECT * FROM (
  SELECT store_id, COUNT(*), SUM(qty) + 1, MAX(price) AS Top
  FROM sales GROUP BY store_id
) x
WHERE x.store_id > 1
