-- Sales of items in a category, with NULL item ids around.
SELECT s.sale_id, s.item_id FROM sales s
WHERE s.item_id IN (SELECT i.item_id FROM items i WHERE i.category = 'food') AND s.qty > 1
