SELECT s.store_id, SUM(s.qty) AS q FROM sales s WHERE s.channel = 'web' GROUP BY s.store_id ORDER BY q DESC, s.store_id LIMIT 3
