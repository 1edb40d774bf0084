SELECT s.sale_id FROM sales s LEFT ANTI JOIN returns r ON s.sale_id = r.sale_id AND r.qty > 1 WHERE s.channel IS NOT NULL
