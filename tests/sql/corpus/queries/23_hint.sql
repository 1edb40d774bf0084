-- A broadcast hint naming an alias.
SELECT /*+ BROADCAST(st) */ s.sale_id, st.region FROM sales s JOIN stores st ON s.store_id = st.store_id WHERE st.region = 'west'
