-- Stores with at least one returned sale.
SELECT st.store_id, st.region FROM stores st
WHERE EXISTS (SELECT 1 FROM sales s JOIN returns r ON r.sale_id = s.sale_id WHERE s.store_id = st.store_id AND r.reason = 'broken')
