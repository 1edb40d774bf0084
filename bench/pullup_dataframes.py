"""The pull-up workload's queries (bench/pullup_workload.py) as PySpark DataFrame pipelines, the way users write
them: the registered TPC-H tables through ``spark.table``, the expensive filter early with an ``F.udf`` that was
never registered by name, ``.join``, ``.groupBy().agg``, ``.select``. One builder per SQL query, with its meaning
(a CTE or a derived table is an intermediate DataFrame; the view query reads a temporary view back). Each builder
makes a fresh DataFrame: a DataFrame run twice reuses its shuffle files and skips the UDF.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: the temporary view of query p07 in DataFrame form: orders filtered by the unnamed UDF
DATAFRAME_VIEW = "checked_orders_dataframe"
MARCH_1, MARCH_3 = dt.date(1995, 3, 1), dt.date(1995, 3, 3)

Builder = Callable[[], "DataFrame"]


def create_view(spark: SparkSession, expensive: Any) -> None:
    """p07's view, defined with the DataFrame UDF (the SQL form's view calls the registered one)."""
    from pyspark.sql import functions as F

    spark.table("orders").filter(expensive(F.col("o_comment"))).createOrReplaceTempView(DATAFRAME_VIEW)


def builders(spark: SparkSession, expensive: Any) -> dict[str, Builder]:
    """Query name (as in bench/pullup_workload.py's QUERIES) -> a function making that query's DataFrame.
    ``expensive``: the ``F.udf`` standing for ``expensive_check``; ``create_view`` must have run for p07. Nothing
    is built (no column, no DataFrame) until a builder is called."""
    from pyspark.sql import functions as F

    col = F.col

    def table(name: str) -> DataFrame:
        return spark.table(name)

    def count(name: str = "n") -> Column:
        return F.count(F.lit(1)).alias(name)

    def customer_is(segment: str, nation: int) -> Column:
        return (col("c_mktsegment") == segment) & (col("c_nationkey") == nation)

    def seg7() -> Column:
        return customer_is("BUILDING", 7)

    def with_customer() -> Column:
        return col("o_custkey") == col("c_custkey")

    def march() -> Column:
        return col("o_orderdate").between(MARCH_1, MARCH_3)

    def checked_orders() -> DataFrame:
        return table("orders").filter(expensive(col("o_comment")))

    def p01() -> DataFrame:
        checked = checked_orders()
        return (
            checked.join(table("customer"), with_customer())
            .filter(seg7())
            .agg(count(), F.sum("o_totalprice").alias("total"))
        )

    def p02() -> DataFrame:
        lineitem = table("lineitem").filter(expensive(col("l_comment")))
        return (
            lineitem.join(table("part"), col("l_partkey") == col("p_partkey"))
            .filter((col("p_brand") == "Brand#23") & (col("p_container") == "MED BOX"))
            .groupBy("p_type")
            .agg(count())
        )

    def p03() -> DataFrame:
        orders = checked_orders().select("o_orderkey", "o_custkey", "o_orderpriority", "o_comment")
        return (
            orders.join(table("customer"), with_customer())
            .filter(customer_is("AUTOMOBILE", 3))
            .groupBy("o_orderpriority")
            .agg(count())
        )

    def p04() -> DataFrame:
        orders = checked_orders().select("o_orderkey", "o_custkey")
        return orders.join(table("customer"), with_customer()).filter(seg7()).agg(count())

    def p05() -> DataFrame:
        return (
            table("orders")
            .join(table("customer"), with_customer() & expensive(col("o_comment")))
            .filter(customer_is("MACHINERY", 11))
            .agg(count(), F.max("o_orderdate").alias("last"))
        )

    def p06() -> DataFrame:
        return (
            table("orders")
            .join(table("customer"), with_customer() & expensive(col("c_comment")))
            .filter(march())
            .groupBy("c_mktsegment")
            .agg(count())
        )

    def p07() -> DataFrame:
        return (
            table(DATAFRAME_VIEW)
            .join(table("customer"), with_customer())
            .filter(seg7())
            .agg(count(), F.sum("o_totalprice").alias("total"))
        )

    def p08() -> DataFrame:
        t1 = table("orders").alias("t1")
        t2 = t1.filter(expensive(col("t1.o_comment"))).alias("t2")
        t3 = t2.select("o_orderkey", "o_custkey", "o_orderpriority", "o_comment").alias("t3")
        customer = table("customer").alias("c")
        return (
            t3.join(customer, col("t3.o_custkey") == col("c.c_custkey"))
            .filter((col("c.c_mktsegment") == "BUILDING") & (col("c.c_nationkey") == 7))
            .groupBy("t3.o_orderpriority")
            .agg(count())
        )

    def p09() -> DataFrame:
        lineitem = table("lineitem").filter(expensive(col("l_comment")))
        return (
            lineitem.join(table("part"), col("l_partkey") == col("p_partkey"))
            .join(table("supplier"), col("l_suppkey") == col("s_suppkey"))
            .filter((col("p_size") == 15) & col("p_type").like("%BRASS") & (col("s_nationkey") == 3))
            .groupBy("s_name")
            .agg(count())
        )

    def p10() -> DataFrame:
        checked_customers = table("customer").filter(expensive(col("c_comment")))
        return (
            table("orders")
            .join(checked_customers, with_customer())
            .filter(march())
            .groupBy("c_mktsegment")
            .agg(count())
        )

    def n01() -> DataFrame:
        return checked_orders().join(table("customer"), with_customer()).agg(count())

    def n02() -> DataFrame:
        return checked_orders().join(table("customer"), with_customer()).filter(col("c_acctbal") > -900).agg(count())

    def n03() -> DataFrame:
        return (
            table("customer")
            .join(table("nation"), (col("c_nationkey") == col("n_nationkey")) & expensive(col("c_comment")))
            .groupBy("n_name")
            .agg(count("k"))
        )

    return {
        "p01_cte": p01,
        "p02_derived_star": p02,
        "p03_derived_columns": p03,
        "p04_derived_projects_away": p04,
        "p05_on_clause": p05,
        "p06_on_clause_dimension_udf": p06,
        "p07_view": p07,
        "p08_dataframe_nesting": p08,
        "p09_cte_two_dimensions": p09,
        "p10_cte_dimension_udf": p10,
        "n01_cte_join_keeps_all": n01,
        "n02_derived_unselective": n02,
        "n03_on_clause_keeps_all": n03,
    }
