-- Sales above their item's average quantity.
SELECT s.sale_id, s.qty FROM sales s
WHERE s.qty > (SELECT AVG(s2.qty) FROM sales s2 WHERE s2.item_id = s.item_id AND s2.channel = 'web')
  AND s.store_id = 1
