SELECT i.category, SUM(CASE WHEN s.channel = 'web' THEN s.qty ELSE 0 END) AS web_qty
FROM sales s JOIN items i ON s.item_id = i.item_id
GROUP BY i.category HAVING COUNT(DISTINCT s.store_id) > 1 AND i.category IS NOT NULL
