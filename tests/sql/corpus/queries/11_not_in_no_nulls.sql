-- NOT IN over a NULL-free list.
SELECT s.sale_id FROM sales s
WHERE s.item_id NOT IN (SELECT r.item_id FROM returns r WHERE r.item_id IS NOT NULL AND r.reason = 'late')
