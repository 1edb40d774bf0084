-- Hand-written analytic queries over schema.py's tables, in Spark SQL, the way analysts write them.
-- Each query starts with a "-- name: <name>" line; generate.py writes more into generated.sql.

-- name: h01_comma_star_brand_year
SELECT d_year, i_brand_id, i_brand, sum(ss_ext_sales_price) AS sum_agg
FROM date_dim dt, store_sales, item
WHERE dt.d_date_sk = store_sales.ss_sold_date_sk AND store_sales.ss_item_sk = item.i_item_sk
  AND item.i_manufact_id = 28 AND dt.d_moy = 11
GROUP BY d_year, i_brand, i_brand_id
ORDER BY d_year, sum_agg DESC, i_brand_id
LIMIT 100

-- name: h02_issue_derived_comma_customer
SELECT c_last_name, c_first_name, substr(s_city, 1, 30) AS city, ss_ticket_number, amt, profit
FROM (SELECT ss_ticket_number, ss_customer_sk, store.s_city, sum(ss_coupon_amt) amt, sum(ss_net_profit) profit
      FROM store_sales, date_dim, store, household_demographics
      WHERE store_sales.ss_sold_date_sk = date_dim.d_date_sk AND store_sales.ss_store_sk = store.s_store_sk
        AND store_sales.ss_hdemo_sk = household_demographics.hd_demo_sk
        AND (household_demographics.hd_dep_count = 6 OR household_demographics.hd_vehicle_count > 2)
        AND date_dim.d_day_name = 'Monday' AND date_dim.d_year IN (1999, 2000, 2001)
        AND store.s_number_employees BETWEEN 200 AND 295
      GROUP BY ss_ticket_number, ss_customer_sk, ss_addr_sk, store.s_city) ms, customer
WHERE ms.ss_customer_sk = customer.c_customer_sk
ORDER BY c_last_name, c_first_name, city, profit
LIMIT 100

-- name: h03_comma_five_way_demographics
SELECT i_item_id, avg(ss_quantity) agg1, avg(ss_list_price) agg2, avg(ss_coupon_amt) agg3, avg(ss_sales_price) agg4
FROM store_sales, customer_demographics, date_dim, item, promotion
WHERE ss_sold_date_sk = d_date_sk AND ss_item_sk = i_item_sk AND ss_cdemo_sk = cd_demo_sk AND ss_promo_sk = p_promo_sk
  AND cd_gender = 'M' AND cd_marital_status = 'S' AND cd_education_status = 'College'
  AND (p_channel_email = 'N' OR p_channel_event = 'N') AND d_year = 2000
GROUP BY i_item_id
ORDER BY i_item_id
LIMIT 100

-- name: h04_explicit_joins_state
SELECT ca.ca_state, count(*) AS cnt, sum(ss.ss_net_profit) AS profit
FROM store_sales ss
JOIN customer c ON ss.ss_customer_sk = c.c_customer_sk
JOIN customer_address ca ON c.c_current_addr_sk = ca.ca_address_sk
JOIN date_dim d ON ss.ss_sold_date_sk = d.d_date_sk
WHERE d.d_year = 2001 AND d.d_qoy = 2 AND ca.ca_state IN ('TN', 'GA', 'TX') AND ss.ss_quantity > 10
GROUP BY ca.ca_state
HAVING count(*) > 5
ORDER BY profit DESC

-- name: h05_cte_once_customer_total
WITH customer_total AS (
  SELECT ss_customer_sk, sum(ss_net_profit) AS total
  FROM store_sales, date_dim
  WHERE ss_sold_date_sk = d_date_sk AND d_year = 2000
  GROUP BY ss_customer_sk
)
SELECT c_customer_id, c_last_name, total
FROM customer_total ct, customer
WHERE ct.ss_customer_sk = c_customer_sk AND c_birth_country = 'CANADA' AND total > 100
ORDER BY total DESC
LIMIT 50

-- name: h06_cte_twice_year_over_year
WITH year_total AS (
  SELECT c_customer_id AS customer_id, d_year AS dyear, sum(ss_ext_sales_price - ss_ext_discount_amt) AS year_total
  FROM customer, store_sales, date_dim
  WHERE c_customer_sk = ss_customer_sk AND ss_sold_date_sk = d_date_sk
  GROUP BY c_customer_id, d_year
)
SELECT t_s_secyear.customer_id
FROM year_total t_s_firstyear, year_total t_s_secyear
WHERE t_s_secyear.customer_id = t_s_firstyear.customer_id
  AND t_s_firstyear.dyear = 2000 AND t_s_secyear.dyear = 2001
  AND t_s_firstyear.year_total > 0 AND t_s_secyear.year_total > t_s_firstyear.year_total * 1.5
ORDER BY t_s_secyear.customer_id
LIMIT 100

-- name: h07_union_all_channels_filter_above
SELECT channel, sum(sales) AS sales, sum(profit) AS profit
FROM (
  SELECT 'store' AS channel, ss_sold_date_sk AS date_sk, ss_item_sk AS item_sk, ss_ext_sales_price AS sales, ss_net_profit AS profit
  FROM store_sales
  UNION ALL
  SELECT 'web' AS channel, ws_sold_date_sk, ws_item_sk, ws_ext_sales_price, ws_net_profit FROM web_sales
  UNION ALL
  SELECT 'catalog' AS channel, cs_sold_date_sk, cs_item_sk, cs_ext_sales_price, cs_net_profit FROM catalog_sales
) all_sales
WHERE date_sk BETWEEN 2451850 AND 2451880 AND item_sk < 500
GROUP BY channel
ORDER BY channel

-- name: h08_union_all_join_date_outside
SELECT d_year, d_moy, sum(amount) AS amount
FROM (
  SELECT ss_sold_date_sk AS sold, ss_ext_sales_price AS amount FROM store_sales WHERE ss_quantity > 5
  UNION ALL
  SELECT ws_sold_date_sk, ws_ext_sales_price FROM web_sales WHERE ws_quantity > 5
) s, date_dim
WHERE s.sold = d_date_sk AND d_year = 2000 AND d_moy BETWEEN 10 AND 12
GROUP BY d_year, d_moy
ORDER BY d_year, d_moy

-- name: h09_left_join_returns
SELECT i_category, count(ss_ticket_number) AS sold, count(sr_ticket_number) AS returned,
       sum(coalesce(sr_return_amt, 0)) AS return_amt
FROM store_sales
JOIN item ON ss_item_sk = i_item_sk
LEFT JOIN store_returns ON ss_ticket_number = sr_ticket_number AND ss_item_sk = sr_item_sk
JOIN date_dim ON ss_sold_date_sk = d_date_sk
WHERE d_year = 2001 AND i_category IN ('Books', 'Music', 'Sports')
GROUP BY i_category
ORDER BY i_category

-- name: h10_left_join_filter_on_nullable_side
SELECT c_customer_id, c_last_name, ca_city
FROM customer LEFT OUTER JOIN customer_address ON c_current_addr_sk = ca_address_sk AND ca_state = 'TN'
WHERE c_birth_year BETWEEN 1960 AND 1970 AND c_preferred_cust_flag = 'Y'
ORDER BY c_customer_id
LIMIT 100

-- name: h11_full_outer_web_store_customers
WITH ssci AS (
  SELECT ss_customer_sk customer_sk, ss_item_sk item_sk FROM store_sales, date_dim
  WHERE ss_sold_date_sk = d_date_sk AND d_year = 2000 GROUP BY ss_customer_sk, ss_item_sk),
csci AS (
  SELECT cs_bill_customer_sk customer_sk, cs_item_sk item_sk FROM catalog_sales, date_dim
  WHERE cs_sold_date_sk = d_date_sk AND d_year = 2000 GROUP BY cs_bill_customer_sk, cs_item_sk)
SELECT sum(CASE WHEN ssci.customer_sk IS NOT NULL AND csci.customer_sk IS NULL THEN 1 ELSE 0 END) store_only,
       sum(CASE WHEN ssci.customer_sk IS NULL AND csci.customer_sk IS NOT NULL THEN 1 ELSE 0 END) catalog_only,
       sum(CASE WHEN ssci.customer_sk IS NOT NULL AND csci.customer_sk IS NOT NULL THEN 1 ELSE 0 END) both_channels
FROM ssci FULL OUTER JOIN csci ON ssci.customer_sk = csci.customer_sk AND ssci.item_sk = csci.item_sk

-- name: h12_exists_correlated
SELECT c.c_customer_id, c.c_last_name
FROM customer c, customer_address ca
WHERE c.c_current_addr_sk = ca.ca_address_sk AND ca.ca_county IN ('Walker County', 'Orange County')
  AND EXISTS (SELECT 1 FROM store_sales, date_dim
              WHERE c.c_customer_sk = ss_customer_sk AND ss_sold_date_sk = d_date_sk AND d_year = 2002 AND d_moy BETWEEN 1 AND 4)
ORDER BY c.c_customer_id
LIMIT 100

-- name: h13_not_exists_correlated
SELECT c.c_customer_id
FROM customer c
WHERE c.c_birth_country = 'GERMANY'
  AND NOT EXISTS (SELECT * FROM web_sales ws WHERE ws.ws_bill_customer_sk = c.c_customer_sk AND ws.ws_quantity > 50)
ORDER BY c.c_customer_id

-- name: h14_in_subquery
SELECT i_item_id, i_product_name, i_current_price
FROM item
WHERE i_current_price BETWEEN 20 AND 50
  AND i_item_sk IN (SELECT cs_item_sk FROM catalog_sales, date_dim
                    WHERE cs_sold_date_sk = d_date_sk AND d_date BETWEEN DATE '2000-02-01' AND DATE '2000-04-01')
ORDER BY i_item_id

-- name: h15_not_in_subquery
SELECT s_store_name, count(*) AS cnt
FROM store_sales, store
WHERE ss_store_sk = s_store_sk
  AND ss_item_sk NOT IN (SELECT sr_item_sk FROM store_returns WHERE sr_return_amt > 400 AND sr_item_sk IS NOT NULL)
  AND ss_sales_price > 100
GROUP BY s_store_name
ORDER BY s_store_name

-- name: h16_scalar_subquery_correlated_avg
SELECT i_item_id, i_category, i_current_price
FROM item i1
WHERE i1.i_current_price > 1.2 * (SELECT avg(i2.i_current_price) FROM item i2 WHERE i2.i_category = i1.i_category)
  AND i1.i_size IN ('small', 'petite')
ORDER BY i_item_id
LIMIT 100

-- name: h17_scalar_subquery_uncorrelated
SELECT ss_ticket_number, ss_net_profit
FROM store_sales, date_dim
WHERE ss_sold_date_sk = d_date_sk AND d_year = 2000 AND d_moy = 12
  AND ss_net_profit > (SELECT avg(ss_net_profit) FROM store_sales WHERE ss_quantity BETWEEN 1 AND 20)
ORDER BY ss_net_profit DESC
LIMIT 20

-- name: h18_window_rank_in_category
SELECT * FROM (
  SELECT i_category, i_class, i_brand, sum(ss_ext_sales_price) AS revenue,
         rank() OVER (PARTITION BY i_category ORDER BY sum(ss_ext_sales_price) DESC) AS rk
  FROM store_sales, item, date_dim
  WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk AND d_year = 1999
  GROUP BY i_category, i_class, i_brand
) ranked
WHERE rk <= 3 AND i_category IN ('Men', 'Women')
ORDER BY i_category, rk, i_brand

-- name: h19_window_moving_avg
SELECT d_date, daily, avg(daily) OVER (ORDER BY d_date ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS week_avg
FROM (SELECT d_date, sum(ws_ext_sales_price) AS daily FROM web_sales, date_dim
      WHERE ws_sold_date_sk = d_date_sk AND d_year = 2000 GROUP BY d_date) t
WHERE d_date >= DATE '2000-06-01'
ORDER BY d_date

-- name: h20_snowflake_income_band
SELECT ib_lower_bound, ib_upper_bound, count(*) AS customers
FROM customer, household_demographics, income_band, customer_address
WHERE c_current_hdemo_sk = hd_demo_sk AND hd_income_band_sk = ib_income_band_sk AND c_current_addr_sk = ca_address_sk
  AND ib_lower_bound >= 30000 AND ib_upper_bound <= 80000 AND ca_city = 'Midway'
GROUP BY ib_lower_bound, ib_upper_bound
ORDER BY ib_lower_bound

-- name: h21_snowflake_sales_income
SELECT hd_buy_potential, ib_income_band_sk, sum(cs_net_profit) AS profit
FROM catalog_sales
JOIN household_demographics ON cs_bill_hdemo_sk = hd_demo_sk
JOIN income_band ON hd_income_band_sk = ib_income_band_sk
JOIN date_dim ON cs_sold_date_sk = d_date_sk
WHERE ib_lower_bound > 100000 AND d_year = 2001 AND hd_buy_potential LIKE '>%'
GROUP BY hd_buy_potential, ib_income_band_sk
ORDER BY profit DESC

-- name: h22_store_returns_join_sales_same_customer
SELECT s_store_name, sum(ss_net_profit) AS store_profit, sum(sr_net_loss) AS loss
FROM store_sales, store_returns, store, date_dim d1, date_dim d2
WHERE d1.d_moy = 4 AND d1.d_year = 2001 AND d1.d_date_sk = ss_sold_date_sk AND s_store_sk = ss_store_sk
  AND ss_customer_sk = sr_customer_sk AND ss_item_sk = sr_item_sk AND ss_ticket_number = sr_ticket_number
  AND sr_returned_date_sk = d2.d_date_sk AND d2.d_moy BETWEEN 4 AND 10 AND d2.d_year = 2001
GROUP BY s_store_name
ORDER BY s_store_name

-- name: h23_case_bucket_counts
SELECT CASE WHEN ss_quantity BETWEEN 1 AND 20 THEN 'small' WHEN ss_quantity BETWEEN 21 AND 60 THEN 'medium'
            ELSE 'large' END AS bucket,
       count(*) AS cnt, avg(ss_ext_discount_amt) AS avg_discount
FROM store_sales, store
WHERE ss_store_sk = s_store_sk AND s_state = 'TN' AND ss_ext_discount_amt IS NOT NULL
GROUP BY 1
ORDER BY 1

-- name: h24_or_across_tables
SELECT count(*)
FROM store_sales, customer_demographics, household_demographics, date_dim
WHERE ss_sold_date_sk = d_date_sk AND ss_cdemo_sk = cd_demo_sk AND ss_hdemo_sk = hd_demo_sk AND d_year = 2001
  AND ((cd_marital_status = 'M' AND cd_education_status = 'Advanced Degree' AND ss_sales_price BETWEEN 100 AND 150
        AND hd_dep_count = 3)
    OR (cd_marital_status = 'S' AND cd_education_status = 'College' AND ss_sales_price BETWEEN 50 AND 100
        AND hd_dep_count = 1))

-- name: h25_partition_filter_literal
SELECT ss_store_sk, sum(ss_quantity) AS qty
FROM store_sales
WHERE ss_sold_date_sk BETWEEN 2451484 AND 2451513 AND ss_store_sk IS NOT NULL
GROUP BY ss_store_sk
ORDER BY ss_store_sk

-- name: h26_partition_filter_in_join
SELECT i_brand, sum(ws_net_profit) AS profit
FROM web_sales ws JOIN item i ON ws.ws_item_sk = i.i_item_sk
WHERE ws.ws_sold_date_sk >= 2451545 AND ws.ws_sold_date_sk < 2451575 AND i.i_color IN ('red', 'navy')
GROUP BY i_brand
ORDER BY profit DESC
LIMIT 10

-- name: h27_distinct_customers_by_state
SELECT ca_state, count(DISTINCT ss_customer_sk) AS customers
FROM store_sales, customer_address, date_dim
WHERE ss_addr_sk = ca_address_sk AND ss_sold_date_sk = d_date_sk AND d_qoy = 1 AND d_year = 2002
  AND ca_gmt_offset = -5
GROUP BY ca_state
ORDER BY customers DESC, ca_state

-- name: h28_intersect_like_via_in
SELECT c_last_name, c_first_name
FROM customer
WHERE c_customer_sk IN (SELECT ss_customer_sk FROM store_sales, date_dim WHERE ss_sold_date_sk = d_date_sk AND d_year = 2000)
  AND c_customer_sk IN (SELECT ws_bill_customer_sk FROM web_sales, date_dim WHERE ws_sold_date_sk = d_date_sk AND d_year = 2000)
ORDER BY c_last_name, c_first_name
LIMIT 100

-- name: h29_udf_on_fact_after_selective_join
SELECT i_brand, sum(ss_net_profit) AS profit
FROM store_sales, item, date_dim
WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk AND d_year = 2000 AND d_moy = 11
  AND i_category = 'Electronics' AND score_profit(ss_net_profit) > 0.5
GROUP BY i_brand
ORDER BY profit DESC

-- name: h30_udf_on_dimension
SELECT c_customer_id, sum(ws_ext_sales_price) AS spent
FROM web_sales, customer
WHERE ws_bill_customer_sk = c_customer_sk AND looks_valid(c_email_address) AND ws_quantity > 20
GROUP BY c_customer_id
ORDER BY spent DESC
LIMIT 25

-- name: h31_udf_in_cte_used_twice
WITH good AS (
  SELECT ss_customer_sk, ss_item_sk, ss_net_profit FROM store_sales
  WHERE score_profit(ss_net_profit) > 0.9 AND ss_quantity > 3
)
SELECT a.ss_customer_sk, count(*) AS pairs
FROM good a, good b
WHERE a.ss_customer_sk = b.ss_customer_sk AND a.ss_item_sk < b.ss_item_sk
GROUP BY a.ss_customer_sk
ORDER BY pairs DESC, a.ss_customer_sk
LIMIT 10

-- name: h32_udf_above_union
SELECT channel, count(*) AS n
FROM (SELECT 'web' AS channel, ws_net_profit AS profit, ws_item_sk AS item_sk FROM web_sales
      UNION ALL
      SELECT 'catalog', cs_net_profit, cs_item_sk FROM catalog_sales) u, item
WHERE u.item_sk = i_item_sk AND i_category = 'Home' AND score_profit(profit) > 0.2
GROUP BY channel
ORDER BY channel

-- name: h33_udf_and_exists
SELECT c_customer_id
FROM customer c
WHERE looks_valid(c.c_email_address) AND c.c_birth_year < 1950
  AND EXISTS (SELECT 1 FROM catalog_sales cs WHERE cs.cs_bill_customer_sk = c.c_customer_sk AND cs.cs_quantity > 90)
ORDER BY c_customer_id

-- name: h34_having_subquery
SELECT ss_store_sk, sum(ss_net_profit) AS profit
FROM store_sales, date_dim
WHERE ss_sold_date_sk = d_date_sk AND d_year = 2001
GROUP BY ss_store_sk
HAVING sum(ss_net_profit) > (SELECT 0.1 * sum(ss_net_profit) FROM store_sales WHERE ss_sold_date_sk BETWEEN 2451911 AND 2452275)
ORDER BY ss_store_sk

-- name: h35_three_channel_cte_union_by_item
WITH ss AS (SELECT i_item_id, sum(ss_ext_sales_price) total_sales FROM store_sales, date_dim, customer_address, item
            WHERE i_item_sk = ss_item_sk AND ss_sold_date_sk = d_date_sk AND d_year = 2001 AND d_moy = 2
              AND ss_addr_sk = ca_address_sk AND ca_gmt_offset = -5 AND i_category = 'Music'
            GROUP BY i_item_id),
     ws AS (SELECT i_item_id, sum(ws_ext_sales_price) total_sales FROM web_sales, date_dim, customer_address, item
            WHERE i_item_sk = ws_item_sk AND ws_sold_date_sk = d_date_sk AND d_year = 2001 AND d_moy = 2
              AND ws_bill_addr_sk = ca_address_sk AND ca_gmt_offset = -5 AND i_category = 'Music'
            GROUP BY i_item_id)
SELECT i_item_id, sum(total_sales) total_sales
FROM (SELECT * FROM ss UNION ALL SELECT * FROM ws) tmp1
GROUP BY i_item_id
ORDER BY i_item_id, total_sales
LIMIT 100

-- name: h36_union_distinct_customers
SELECT count(*) FROM (
  SELECT DISTINCT c_last_name, c_first_name, d_date FROM store_sales, date_dim, customer
  WHERE ss_sold_date_sk = d_date_sk AND ss_customer_sk = c_customer_sk AND d_year = 2000
  UNION
  SELECT DISTINCT c_last_name, c_first_name, d_date FROM web_sales, date_dim, customer
  WHERE ws_sold_date_sk = d_date_sk AND ws_bill_customer_sk = c_customer_sk AND d_year = 2000
) both_channels

-- name: h37_self_join_item_pairs
SELECT a.i_item_id, b.i_item_id AS other, a.i_current_price
FROM item a, item b
WHERE a.i_brand_id = b.i_brand_id AND a.i_item_sk < b.i_item_sk AND a.i_category = 'Shoes' AND b.i_size = 'large'
ORDER BY a.i_item_id, other
LIMIT 50

-- name: h38_non_equi_band_join
SELECT ib_income_band_sk, count(*) AS households
FROM household_demographics, income_band
WHERE hd_income_band_sk = ib_income_band_sk AND hd_vehicle_count BETWEEN 1 AND 2 AND hd_dep_count >= ib_income_band_sk / 4
GROUP BY ib_income_band_sk
ORDER BY ib_income_band_sk

-- name: h39_range_join_written_as_is
SELECT p_promo_id, count(*) AS n
FROM promotion, item
WHERE p_item_sk = i_item_sk AND i_current_price > p_cost / 100 AND p_channel_tv = 'Y'
GROUP BY p_promo_id
ORDER BY p_promo_id

-- name: h40_nested_derived_tables
SELECT state, avg(total) AS avg_total
FROM (SELECT ca_state AS state, c_customer_sk, total
      FROM (SELECT ws_bill_customer_sk, sum(ws_net_profit) AS total FROM web_sales WHERE ws_quantity > 2 GROUP BY ws_bill_customer_sk) w,
           customer, customer_address
      WHERE w.ws_bill_customer_sk = c_customer_sk AND c_current_addr_sk = ca_address_sk) per_customer
WHERE state IN ('CA', 'NY')
GROUP BY state
ORDER BY state

-- name: h41_filter_on_aggregate_output_in_outer_where
SELECT * FROM (
  SELECT i_category, d_year, sum(cs_ext_sales_price) AS sales
  FROM catalog_sales, item, date_dim
  WHERE cs_item_sk = i_item_sk AND cs_sold_date_sk = d_date_sk
  GROUP BY i_category, d_year
) t
WHERE d_year = 2000 AND i_category = 'Jewelry' AND sales > 10

-- name: h42_left_join_then_where_on_right
SELECT c_customer_id, ca_state
FROM customer c LEFT JOIN customer_address a ON c.c_current_addr_sk = a.ca_address_sk
WHERE a.ca_state = 'GA' AND c.c_preferred_cust_flag = 'N'
ORDER BY c_customer_id

-- name: h43_right_join_promotions
SELECT p_promo_name, count(ss_ticket_number) AS tickets
FROM store_sales RIGHT JOIN promotion ON ss_promo_sk = p_promo_sk AND ss_quantity > 50
WHERE p_channel_email = 'Y'
GROUP BY p_promo_name
ORDER BY p_promo_name

-- name: h44_grouping_rollup
SELECT i_category, i_class, sum(ss_net_profit) AS profit
FROM store_sales, item, store
WHERE ss_item_sk = i_item_sk AND ss_store_sk = s_store_sk AND s_state = 'TN' AND i_category IN ('Books', 'Home')
GROUP BY ROLLUP (i_category, i_class)
ORDER BY i_category, i_class

-- name: h45_cte_twice_with_filter_each_use
WITH web_v AS (
  SELECT ws_item_sk item_sk, d_date, sum(ws_sales_price) AS sales
  FROM web_sales, date_dim
  WHERE ws_sold_date_sk = d_date_sk AND d_year = 2001 AND ws_item_sk IS NOT NULL
  GROUP BY ws_item_sk, d_date
)
SELECT cur.item_sk, cur.d_date, cur.sales, prev.sales AS prev_sales
FROM web_v cur, web_v prev
WHERE cur.item_sk = prev.item_sk AND prev.d_date = date_sub(cur.d_date, 1) AND cur.sales > prev.sales
  AND cur.item_sk < 100
ORDER BY cur.item_sk, cur.d_date
LIMIT 100

-- name: h46_in_list_and_like
SELECT ca_zip, sum(cs_sales_price) AS sales
FROM catalog_sales, customer, customer_address, date_dim
WHERE cs_bill_customer_sk = c_customer_sk AND c_current_addr_sk = ca_address_sk AND cs_sold_date_sk = d_date_sk
  AND (substr(ca_zip, 1, 5) IN ('85669', '86197', '88274', '83405', '86475') OR ca_state IN ('CA', 'WA', 'GA')
       OR cs_sales_price > 250)
  AND d_qoy = 2 AND d_year = 2001
GROUP BY ca_zip
ORDER BY ca_zip
LIMIT 100

-- name: h47_count_star_subquery_in_select
SELECT s_store_name,
       (SELECT count(*) FROM store_returns sr WHERE sr.sr_store_sk = s.s_store_sk AND sr.sr_return_quantity > 10) AS big_returns
FROM store s
WHERE s_number_employees > 250
ORDER BY s_store_name

-- name: h48_cross_join_written_with_small_dim
SELECT s_store_name, web_name, count(*) AS n
FROM store CROSS JOIN web_site
WHERE s_market_id = 5 AND web_company_name = 'pri'
GROUP BY s_store_name, web_name
ORDER BY s_store_name, web_name

-- name: h49_coalesce_null_keys
SELECT coalesce(i_category, 'unknown') AS category, count(*) AS n, sum(ws_quantity) AS qty
FROM web_sales LEFT JOIN item ON ws_item_sk = i_item_sk
WHERE ws_sold_date_sk IS NULL OR ws_quantity IS NULL
GROUP BY coalesce(i_category, 'unknown')
ORDER BY category

-- name: h50_date_arithmetic_window
SELECT i_item_id, d_date, sum(cs_quantity) AS qty
FROM catalog_sales, item, date_dim
WHERE cs_item_sk = i_item_sk AND cs_sold_date_sk = d_date_sk
  AND d_date BETWEEN DATE '2000-03-11' AND date_add(DATE '2000-03-11', 30)
  AND i_current_price BETWEEN 10 AND 40
GROUP BY i_item_id, d_date
ORDER BY i_item_id, d_date
LIMIT 100
