-- NOT IN over a subquery that yields NULLs: no row survives where the list has a NULL.
SELECT s.sale_id FROM sales s
WHERE s.item_id NOT IN (SELECT r.item_id FROM returns r WHERE r.qty > 1) AND s.channel = 'store'
