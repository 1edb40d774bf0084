-- An EXISTS under OR stays a predicate.
SELECT st.store_id FROM stores st WHERE st.region = 'west' OR EXISTS (SELECT 1 FROM returns r JOIN sales s ON r.sale_id = s.sale_id WHERE s.store_id = st.store_id)
