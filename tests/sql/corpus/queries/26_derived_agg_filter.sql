-- A filter on an aggregate's group key moves below the aggregate.
SELECT x.store_id, x.total FROM (SELECT store_id, SUM(qty) AS total FROM sales GROUP BY store_id) x WHERE x.store_id BETWEEN 2 AND 6
