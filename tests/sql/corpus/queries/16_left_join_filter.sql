-- A WHERE on the preserved side of a left join, and one on the other side.
SELECT s.sale_id, i.brand FROM sales s LEFT JOIN items i ON s.item_id = i.item_id
WHERE s.qty >= 2 AND (i.brand IS NULL OR i.brand = 'acme')
