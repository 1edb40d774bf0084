-- USING merges the key column.
SELECT item_id, s.qty, i.category FROM sales s JOIN items i USING (item_id) WHERE i.category = 'tools'
