"""The 22 TPC-H queries written by hand with the PySpark DataFrame API, one function per query (``q01(spark)`` ...),
each giving the rows and column names of its SQL form in bench/tpch/queries.

Written the way DataFrame code usually is: tables read with ``spark.table``, filters with string dates (Spark
casts them to the column's date type), joins on column equality, subqueries as joins: ``EXISTS`` / ``IN`` as semi
joins, ``NOT EXISTS`` / ``NOT IN`` (of a key that is never NULL) as anti joins, a correlated scalar subquery as an
aggregate joined back, an uncorrelated one as a one-row aggregate crossed in. Decimal constants of the SQL are
written as integer arithmetic (``avg / 5`` for ``0.2 * avg``), so the comparisons stay in decimals as the SQL's do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

DataFrame = Any


def _tables(spark: Any, *names: str) -> list[DataFrame]:
    return [spark.table(n) for n in names]


def _revenue() -> Any:
    from pyspark.sql import functions as F

    return F.col("l_extendedprice") * (1 - F.col("l_discount"))


def q01(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    (lineitem,) = _tables(spark, "lineitem")
    return (
        lineitem.filter(F.col("l_shipdate") <= "1998-09-02")
        .groupBy("l_returnflag", "l_linestatus")
        .agg(
            F.sum("l_quantity").alias("sum_qty"),
            F.sum("l_extendedprice").alias("sum_base_price"),
            F.sum(_revenue()).alias("sum_disc_price"),
            F.sum(_revenue() * (1 + F.col("l_tax"))).alias("sum_charge"),
            F.avg("l_quantity").alias("avg_qty"),
            F.avg("l_extendedprice").alias("avg_price"),
            F.avg("l_discount").alias("avg_disc"),
            F.count("*").alias("count_order"),
        )
        .orderBy("l_returnflag", "l_linestatus")
    )


def _european_offers(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    partsupp, supplier, nation, region = _tables(spark, "partsupp", "supplier", "nation", "region")
    return (
        partsupp.join(supplier, F.col("ps_suppkey") == F.col("s_suppkey"))
        .join(nation, F.col("s_nationkey") == F.col("n_nationkey"))
        .join(region.filter(F.col("r_name") == "EUROPE"), F.col("n_regionkey") == F.col("r_regionkey"))
    )


def q02(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    (part,) = _tables(spark, "part")
    cheapest = (
        _european_offers(spark)
        .groupBy("ps_partkey")
        .agg(F.min("ps_supplycost").alias("min_cost"))
        .withColumnRenamed("ps_partkey", "min_partkey")
    )
    return (
        part.filter((F.col("p_size") == 15) & F.col("p_type").endswith("BRASS"))
        .join(_european_offers(spark), F.col("p_partkey") == F.col("ps_partkey"))
        .join(
            cheapest,
            (F.col("p_partkey") == F.col("min_partkey")) & (F.col("ps_supplycost") == F.col("min_cost")),
        )
        .select("s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone", "s_comment")
        .orderBy(F.col("s_acctbal").desc(), "n_name", "s_name", "p_partkey")
        .limit(100)
    )


def q03(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    customer, orders, lineitem = _tables(spark, "customer", "orders", "lineitem")
    return (
        customer.filter(F.col("c_mktsegment") == "BUILDING")
        .join(orders.filter(F.col("o_orderdate") < "1995-03-15"), F.col("c_custkey") == F.col("o_custkey"))
        .join(lineitem.filter(F.col("l_shipdate") > "1995-03-15"), F.col("l_orderkey") == F.col("o_orderkey"))
        .groupBy("l_orderkey", "o_orderdate", "o_shippriority")
        .agg(F.sum(_revenue()).alias("revenue"))
        .select("l_orderkey", "revenue", "o_orderdate", "o_shippriority")
        .orderBy(F.col("revenue").desc(), "o_orderdate")
        .limit(10)
    )


def q04(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    orders, lineitem = _tables(spark, "orders", "lineitem")
    late = lineitem.filter(F.col("l_commitdate") < F.col("l_receiptdate"))
    return (
        orders.filter((F.col("o_orderdate") >= "1993-07-01") & (F.col("o_orderdate") < "1993-10-01"))
        .join(late, F.col("l_orderkey") == F.col("o_orderkey"), "left_semi")
        .groupBy("o_orderpriority")
        .agg(F.count("*").alias("order_count"))
        .orderBy("o_orderpriority")
    )


def q05(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    customer, orders, lineitem, supplier, nation, region = _tables(
        spark, "customer", "orders", "lineitem", "supplier", "nation", "region"
    )
    return (
        customer.join(
            orders.filter((F.col("o_orderdate") >= "1994-01-01") & (F.col("o_orderdate") < "1995-01-01")),
            F.col("c_custkey") == F.col("o_custkey"),
        )
        .join(lineitem, F.col("l_orderkey") == F.col("o_orderkey"))
        .join(
            supplier,
            (F.col("l_suppkey") == F.col("s_suppkey")) & (F.col("c_nationkey") == F.col("s_nationkey")),
        )
        .join(nation, F.col("s_nationkey") == F.col("n_nationkey"))
        .join(region.filter(F.col("r_name") == "ASIA"), F.col("n_regionkey") == F.col("r_regionkey"))
        .groupBy("n_name")
        .agg(F.sum(_revenue()).alias("revenue"))
        .orderBy(F.col("revenue").desc())
    )


def q06(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    (lineitem,) = _tables(spark, "lineitem")
    return lineitem.filter(
        (F.col("l_shipdate") >= "1994-01-01")
        & (F.col("l_shipdate") < "1995-01-01")
        & F.col("l_discount").between(0.05, 0.07)
        & (F.col("l_quantity") < 24)
    ).agg(F.sum(F.col("l_extendedprice") * F.col("l_discount")).alias("revenue"))


def q07(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    supplier, lineitem, orders, customer, nation = _tables(
        spark, "supplier", "lineitem", "orders", "customer", "nation"
    )
    n1 = nation.select(F.col("n_nationkey").alias("n1_key"), F.col("n_name").alias("supp_nation"))
    n2 = nation.select(F.col("n_nationkey").alias("n2_key"), F.col("n_name").alias("cust_nation"))
    shipping = (
        supplier.join(
            lineitem.filter(F.col("l_shipdate").between("1995-01-01", "1996-12-31")),
            F.col("s_suppkey") == F.col("l_suppkey"),
        )
        .join(orders, F.col("o_orderkey") == F.col("l_orderkey"))
        .join(customer, F.col("c_custkey") == F.col("o_custkey"))
        .join(n1, F.col("s_nationkey") == F.col("n1_key"))
        .join(n2, F.col("c_nationkey") == F.col("n2_key"))
        .filter(
            ((F.col("supp_nation") == "FRANCE") & (F.col("cust_nation") == "GERMANY"))
            | ((F.col("supp_nation") == "GERMANY") & (F.col("cust_nation") == "FRANCE"))
        )
        .select("supp_nation", "cust_nation", F.year("l_shipdate").alias("l_year"), _revenue().alias("volume"))
    )
    return (
        shipping.groupBy("supp_nation", "cust_nation", "l_year")
        .agg(F.sum("volume").alias("revenue"))
        .orderBy("supp_nation", "cust_nation", "l_year")
    )


def q08(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    part, supplier, lineitem, orders, customer, nation, region = _tables(
        spark, "part", "supplier", "lineitem", "orders", "customer", "nation", "region"
    )
    n1 = nation.select(F.col("n_nationkey").alias("n1_key"), F.col("n_regionkey").alias("n1_region"))
    n2 = nation.select(F.col("n_nationkey").alias("n2_key"), F.col("n_name").alias("nation"))
    all_nations = (
        part.filter(F.col("p_type") == "ECONOMY ANODIZED STEEL")
        .join(lineitem, F.col("p_partkey") == F.col("l_partkey"))
        .join(supplier, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(
            orders.filter(F.col("o_orderdate").between("1995-01-01", "1996-12-31")),
            F.col("l_orderkey") == F.col("o_orderkey"),
        )
        .join(customer, F.col("o_custkey") == F.col("c_custkey"))
        .join(n1, F.col("c_nationkey") == F.col("n1_key"))
        .join(region.filter(F.col("r_name") == "AMERICA"), F.col("n1_region") == F.col("r_regionkey"))
        .join(n2, F.col("s_nationkey") == F.col("n2_key"))
        .select(F.year("o_orderdate").alias("o_year"), _revenue().alias("volume"), "nation")
    )
    brazil = F.when(F.col("nation") == "BRAZIL", F.col("volume")).otherwise(0)
    return all_nations.groupBy("o_year").agg((F.sum(brazil) / F.sum("volume")).alias("mkt_share")).orderBy("o_year")


def q09(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    part, supplier, lineitem, partsupp, orders, nation = _tables(
        spark, "part", "supplier", "lineitem", "partsupp", "orders", "nation"
    )
    profit = (
        part.filter(F.col("p_name").contains("green"))
        .join(lineitem, F.col("p_partkey") == F.col("l_partkey"))
        .join(supplier, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(
            partsupp,
            (F.col("ps_suppkey") == F.col("l_suppkey")) & (F.col("ps_partkey") == F.col("l_partkey")),
        )
        .join(orders, F.col("o_orderkey") == F.col("l_orderkey"))
        .join(nation, F.col("s_nationkey") == F.col("n_nationkey"))
        .select(
            F.col("n_name").alias("nation"),
            F.year("o_orderdate").alias("o_year"),
            (_revenue() - F.col("ps_supplycost") * F.col("l_quantity")).alias("amount"),
        )
    )
    return (
        profit.groupBy("nation", "o_year")
        .agg(F.sum("amount").alias("sum_profit"))
        .orderBy("nation", F.col("o_year").desc())
    )


def q10(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    customer, orders, lineitem, nation = _tables(spark, "customer", "orders", "lineitem", "nation")
    return (
        customer.join(
            orders.filter((F.col("o_orderdate") >= "1993-10-01") & (F.col("o_orderdate") < "1994-01-01")),
            F.col("c_custkey") == F.col("o_custkey"),
        )
        .join(lineitem.filter(F.col("l_returnflag") == "R"), F.col("l_orderkey") == F.col("o_orderkey"))
        .join(nation, F.col("c_nationkey") == F.col("n_nationkey"))
        .groupBy("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")
        .agg(F.sum(_revenue()).alias("revenue"))
        .select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")
        .orderBy(F.col("revenue").desc())
        .limit(20)
    )


def _german_stock(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    partsupp, supplier, nation = _tables(spark, "partsupp", "supplier", "nation")
    return (
        partsupp.join(supplier, F.col("ps_suppkey") == F.col("s_suppkey"))
        .join(nation.filter(F.col("n_name") == "GERMANY"), F.col("s_nationkey") == F.col("n_nationkey"))
        .withColumn("stock", F.col("ps_supplycost") * F.col("ps_availqty"))
    )


def q11(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    threshold = _german_stock(spark).agg((F.sum("stock") / 10000).alias("threshold"))
    return (
        _german_stock(spark)
        .groupBy("ps_partkey")
        .agg(F.sum("stock").alias("value"))
        .crossJoin(threshold)
        .filter(F.col("value") > F.col("threshold"))
        .select("ps_partkey", "value")
        .orderBy(F.col("value").desc())
    )


def q12(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    orders, lineitem = _tables(spark, "orders", "lineitem")
    urgent = F.col("o_orderpriority").isin("1-URGENT", "2-HIGH")
    return (
        orders.join(
            lineitem.filter(
                F.col("l_shipmode").isin("MAIL", "SHIP")
                & (F.col("l_commitdate") < F.col("l_receiptdate"))
                & (F.col("l_shipdate") < F.col("l_commitdate"))
                & (F.col("l_receiptdate") >= "1994-01-01")
                & (F.col("l_receiptdate") < "1995-01-01")
            ),
            F.col("o_orderkey") == F.col("l_orderkey"),
        )
        .groupBy("l_shipmode")
        .agg(
            F.sum(F.when(urgent, 1).otherwise(0)).alias("high_line_count"),
            F.sum(F.when(~urgent, 1).otherwise(0)).alias("low_line_count"),
        )
        .orderBy("l_shipmode")
    )


def q13(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    customer, orders = _tables(spark, "customer", "orders")
    c_orders = (
        customer.join(
            orders,
            (F.col("c_custkey") == F.col("o_custkey")) & ~F.col("o_comment").like("%special%requests%"),
            "left",
        )
        .groupBy("c_custkey")
        .agg(F.count("o_orderkey").alias("c_count"))
    )
    return (
        c_orders.groupBy("c_count")
        .agg(F.count("*").alias("custdist"))
        .orderBy(F.col("custdist").desc(), F.col("c_count").desc())
    )


def q14(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    lineitem, part = _tables(spark, "lineitem", "part")
    promo = F.when(F.col("p_type").startswith("PROMO"), _revenue()).otherwise(0)
    return (
        lineitem.filter((F.col("l_shipdate") >= "1995-09-01") & (F.col("l_shipdate") < "1995-10-01"))
        .join(part, F.col("l_partkey") == F.col("p_partkey"))
        .agg((F.sum(promo) * 100 / F.sum(_revenue())).alias("promo_revenue"))
    )


def q15(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    lineitem, supplier = _tables(spark, "lineitem", "supplier")
    revenue0 = (
        lineitem.filter((F.col("l_shipdate") >= "1996-01-01") & (F.col("l_shipdate") < "1996-04-01"))
        .groupBy(F.col("l_suppkey").alias("supplier_no"))
        .agg(F.sum(_revenue()).alias("total_revenue"))
    )
    top = revenue0.agg(F.max("total_revenue").alias("max_revenue"))
    return (
        supplier.join(revenue0, F.col("s_suppkey") == F.col("supplier_no"))
        .join(top, F.col("total_revenue") == F.col("max_revenue"))
        .select("s_suppkey", "s_name", "s_address", "s_phone", "total_revenue")
        .orderBy("s_suppkey")
    )


def q16(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    partsupp, part, supplier = _tables(spark, "partsupp", "part", "supplier")
    complaints = supplier.filter(F.col("s_comment").like("%Customer%Complaints%"))
    return (
        partsupp.join(
            part.filter(
                (F.col("p_brand") != "Brand#45")
                & ~F.col("p_type").startswith("MEDIUM POLISHED")
                & F.col("p_size").isin(49, 14, 23, 45, 19, 3, 36, 9)
            ),
            F.col("p_partkey") == F.col("ps_partkey"),
        )
        .join(complaints, F.col("ps_suppkey") == F.col("s_suppkey"), "left_anti")
        .groupBy("p_brand", "p_type", "p_size")
        .agg(F.countDistinct("ps_suppkey").alias("supplier_cnt"))
        .orderBy(F.col("supplier_cnt").desc(), "p_brand", "p_type", "p_size")
    )


def q17(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    lineitem, part = _tables(spark, "lineitem", "part")
    small = lineitem.groupBy(F.col("l_partkey").alias("avg_partkey")).agg(
        (F.avg("l_quantity") / 5).alias("small_quantity")
    )
    return (
        lineitem.join(
            part.filter((F.col("p_brand") == "Brand#23") & (F.col("p_container") == "MED BOX")),
            F.col("p_partkey") == F.col("l_partkey"),
        )
        .join(small, F.col("avg_partkey") == F.col("p_partkey"))
        .filter(F.col("l_quantity") < F.col("small_quantity"))
        .agg((F.sum("l_extendedprice") / 7).alias("avg_yearly"))
    )


def q18(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    customer, orders, lineitem = _tables(spark, "customer", "orders", "lineitem")
    large = (
        lineitem.groupBy(F.col("l_orderkey").alias("large_orderkey"))
        .agg(F.sum("l_quantity").alias("quantity"))
        .filter(F.col("quantity") > 300)
    )
    return (
        customer.join(orders, F.col("c_custkey") == F.col("o_custkey"))
        .join(large, F.col("o_orderkey") == F.col("large_orderkey"), "left_semi")
        .join(lineitem, F.col("o_orderkey") == F.col("l_orderkey"))
        .groupBy("c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice")
        .agg(F.sum("l_quantity"))
        .orderBy(F.col("o_totalprice").desc(), "o_orderdate")
        .limit(100)
    )


def q19(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    lineitem, part = _tables(spark, "lineitem", "part")
    by_air = F.col("l_shipmode").isin("AIR", "AIR REG") & (F.col("l_shipinstruct") == "DELIVER IN PERSON")

    def kind(brand: str, containers: list[str], quantity: int, size: int) -> Any:
        return (
            (F.col("p_brand") == brand)
            & F.col("p_container").isin(*containers)
            & F.col("l_quantity").between(quantity, quantity + 10)
            & F.col("p_size").between(1, size)
            & by_air
        )

    return (
        lineitem.join(part, F.col("p_partkey") == F.col("l_partkey"))
        .filter(
            kind("Brand#12", ["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 1, 5)
            | kind("Brand#23", ["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10, 10)
            | kind("Brand#34", ["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 20, 15)
        )
        .agg(F.sum(_revenue()).alias("revenue"))
    )


def q20(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    supplier, nation, partsupp, part, lineitem = _tables(spark, "supplier", "nation", "partsupp", "part", "lineitem")
    shipped = (
        lineitem.filter((F.col("l_shipdate") >= "1994-01-01") & (F.col("l_shipdate") < "1995-01-01"))
        .groupBy("l_partkey", "l_suppkey")
        .agg((F.sum("l_quantity") / 2).alias("half_quantity"))
    )
    excess = (
        partsupp.join(
            part.filter(F.col("p_name").startswith("forest")), F.col("ps_partkey") == F.col("p_partkey"), "left_semi"
        )
        .join(shipped, (F.col("l_partkey") == F.col("ps_partkey")) & (F.col("l_suppkey") == F.col("ps_suppkey")))
        .filter(F.col("ps_availqty") > F.col("half_quantity"))
    )
    return (
        supplier.join(excess, F.col("s_suppkey") == F.col("ps_suppkey"), "left_semi")
        .join(nation.filter(F.col("n_name") == "CANADA"), F.col("s_nationkey") == F.col("n_nationkey"))
        .select("s_name", "s_address")
        .orderBy("s_name")
    )


def q21(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    supplier, lineitem, orders, nation = _tables(spark, "supplier", "lineitem", "orders", "nation")
    l1 = lineitem.filter(F.col("l_receiptdate") > F.col("l_commitdate"))
    l2 = lineitem.select(F.col("l_orderkey").alias("l2_orderkey"), F.col("l_suppkey").alias("l2_suppkey"))
    l3 = lineitem.filter(F.col("l_receiptdate") > F.col("l_commitdate")).select(
        F.col("l_orderkey").alias("l3_orderkey"), F.col("l_suppkey").alias("l3_suppkey")
    )
    return (
        supplier.join(l1, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(orders.filter(F.col("o_orderstatus") == "F"), F.col("o_orderkey") == F.col("l_orderkey"))
        .join(nation.filter(F.col("n_name") == "SAUDI ARABIA"), F.col("s_nationkey") == F.col("n_nationkey"))
        .join(
            l2,
            (F.col("l2_orderkey") == F.col("l_orderkey")) & (F.col("l2_suppkey") != F.col("l_suppkey")),
            "left_semi",
        )
        .join(
            l3,
            (F.col("l3_orderkey") == F.col("l_orderkey")) & (F.col("l3_suppkey") != F.col("l_suppkey")),
            "left_anti",
        )
        .groupBy("s_name")
        .agg(F.count("*").alias("numwait"))
        .orderBy(F.col("numwait").desc(), "s_name")
        .limit(100)
    )


def q22(spark: Any) -> DataFrame:
    from pyspark.sql import functions as F

    customer, orders = _tables(spark, "customer", "orders")
    codes = ["13", "31", "23", "29", "30", "18", "17"]
    coded = customer.withColumn("cntrycode", F.substring("c_phone", 1, 2)).filter(F.col("cntrycode").isin(*codes))
    average = coded.filter(F.col("c_acctbal") > 0).agg(F.avg("c_acctbal").alias("avg_acctbal"))
    return (
        coded.crossJoin(average)
        .filter(F.col("c_acctbal") > F.col("avg_acctbal"))
        .join(orders, F.col("o_custkey") == F.col("c_custkey"), "left_anti")
        .groupBy("cntrycode")
        .agg(F.count("*").alias("numcust"), F.sum("c_acctbal").alias("totacctbal"))
        .orderBy("cntrycode")
    )


#: query name (as bench/tpch/queries names its file) -> its DataFrame
QUERIES: dict[str, Callable[[Any], DataFrame]] = {f"q{i:02d}": globals()[f"q{i:02d}"] for i in range(1, 23)}
