-- Quantities by channel and category over every combination.
SELECT s.channel, i.category, SUM(s.qty) AS qty, grouping_id() AS gid
FROM sales s JOIN items i ON s.item_id = i.item_id
WHERE i.list_price > 5
GROUP BY CUBE (s.channel, i.category)
