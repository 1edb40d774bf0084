-- Items never sold on the web.
SELECT i.item_id, i.brand FROM items i
WHERE NOT EXISTS (SELECT 1 FROM sales s WHERE s.item_id = i.item_id AND s.channel = 'web') AND i.category <> 'toys'
