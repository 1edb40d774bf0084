-- Refused: no plan node for LATERAL VIEW.
SELECT s.sale_id, x FROM sales s LATERAL VIEW explode(array(s.qty, s.store_id)) e AS x
