-- Items sold and returned, minus those returned late.
SELECT s.item_id FROM sales s WHERE s.qty > 0
INTERSECT
SELECT r.item_id FROM returns r
EXCEPT
SELECT r.item_id FROM returns r WHERE r.reason = 'late'
