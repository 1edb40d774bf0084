SELECT sale_id, r.reason FROM sales NATURAL JOIN returns r WHERE r.reason IS NOT NULL
