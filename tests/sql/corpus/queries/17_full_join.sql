SELECT COALESCE(s.item_id, i.item_id) AS item, s.qty, i.category FROM sales s FULL OUTER JOIN items i ON s.item_id = i.item_id
WHERE i.list_price > 10 OR s.qty IS NULL
