SELECT s.sale_id FROM sales s WHERE s.channel IN ('web', 'catalog') OR s.qty IS NULL OR s.price BETWEEN 10 AND 20
