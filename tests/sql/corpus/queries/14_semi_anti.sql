-- Left semi and left anti joins.
SELECT s.sale_id, s.store_id FROM sales s LEFT SEMI JOIN returns r ON s.sale_id = r.sale_id WHERE s.qty > 0
