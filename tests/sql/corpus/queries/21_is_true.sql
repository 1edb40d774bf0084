-- Three-valued tests.
SELECT s.sale_id, (s.qty > 2) IS TRUE AS big, (s.qty > 2) IS NOT FALSE AS maybe_big FROM sales s
WHERE (s.price > 50) IS NOT TRUE AND (s.channel = 'web') IS NOT UNKNOWN
