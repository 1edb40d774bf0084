-- Constant join conditions.
SELECT s.sale_id, i.item_id FROM sales s LEFT JOIN items i ON FALSE WHERE s.qty > 3
