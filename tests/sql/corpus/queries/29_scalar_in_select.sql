SELECT st.store_id, (SELECT COUNT(*) FROM sales s WHERE s.store_id = st.store_id AND s.qty > 1) AS busy
FROM stores st WHERE st.region = 'east'
