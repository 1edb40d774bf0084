-- Web and store sales side by side, filtered after the union.
SELECT * FROM (
  SELECT s.sale_id, s.qty, 'web' AS src FROM sales s WHERE s.channel = 'web'
  UNION ALL
  SELECT s.sale_id, s.qty, 'store' AS src FROM sales s WHERE s.channel = 'store'
) u WHERE u.qty > 1
