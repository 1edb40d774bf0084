"""``run_dataframe`` over the DataFrames pipelines are made of (temporary views, ``spark.range``, in-memory rows,
``spark.sql`` results, a cached DataFrame, ``pandas_udf``, unions, windows, ``dropDuplicates``, ``explode``,
``orderBy``/``limit``): the same rows and the same schema as the original; a cached DataFrame stays a cache hit
and stays cached; a Spark Connect DataFrame is refused clearly; and random pipelines over NULL-rich data give the
original's rows (as multisets) and schema."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pandas as pd  # the pandas UDF's type hints are read from this module's names
import pytest

from pushdown_client.dataframe import SparkConnectUnsupported, check_classic, run_dataframe
from service.client import PushdownClient
from tests.spark import plans
from tests.spark.world import catalog, register

EXPENSIVE = {"cost": 5000}


@pytest.fixture(scope="module")
def world(spark, tmp_path_factory):
    """The NULL-rich ``orders`` and ``customer`` temporary views, a row UDF and a pandas UDF (never registered)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    register(spark)
    location = tmp_path_factory.mktemp("table") / "customer_table"
    spark.table("customer").write.mode("overwrite").saveAsTable("dataframe_customer_table", path=str(location))

    def odd_length(text):
        return None if text is None else len(text) % 3 != 0

    @F.pandas_udf(BooleanType())
    def odd_length_pandas(texts: pd.Series) -> pd.Series:
        return texts.str.len() % 3 != 0

    return spark, F.udf(odd_length, BooleanType()), odd_length_pandas


def cases(world: Any) -> dict[str, Any]:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark, udf, pandas_udf = world
    o, c = spark.table("orders"), spark.table("customer")
    selective = (c.c_mktsegment == "BUILDING") & (c.c_nationkey == 5)
    by_customer = Window.partitionBy("o_custkey").orderBy("o_id")
    names = spark.createDataFrame([(i, f"n{i}") for i in range(10)], "k long, name string")
    return {
        "temp views, F.udf after the join": o.join(c, o.o_custkey == c.c_custkey).filter(selective & udf(o.o_comment)),
        "pandas_udf": o.join(c, o.o_custkey == c.c_custkey)
        .filter(selective & pandas_udf(o.o_comment))
        .select("o_id", "c_name"),
        "join using a column": o.withColumnRenamed("o_custkey", "k")
        .join(c.withColumnRenamed("c_custkey", "k"), "k")
        .filter((F.col("c_nationkey") == 5) & udf("o_comment")),
        "left join": o.join(c, o.o_custkey == c.c_custkey, "left").filter(F.col("c_nationkey") == 5),
        "range and in-memory rows": spark.range(100)
        .withColumn("k", F.col("id") % 10)
        .join(names, "k")
        .filter(F.col("name") == "n3"),
        "spark.sql result": spark.sql("SELECT o_custkey, count(*) AS n FROM orders GROUP BY o_custkey")
        .filter("n > 5")
        .join(c, F.col("o_custkey") == c.c_custkey),
        "union": o.select("o_id", "o_custkey").union(o.select("o_id", "o_custkey")).filter("o_custkey = 3"),
        "catalog table": o.join(
            spark.table("dataframe_customer_table").withColumnRenamed("c_custkey", "o_custkey"), "o_custkey"
        ).filter((F.col("c_nationkey") == 5) & udf("o_comment")),
        "unionByName": o.select("o_id", "o_custkey").unionByName(o.select("o_custkey", "o_id")).filter("o_custkey = 3"),
        "dropDuplicates on every column": o.dropDuplicates().filter("o_custkey > 100"),
        "distinct": o.select("o_custkey").distinct().filter("o_custkey > 100"),
        "dropDuplicates on a subset": o.dropDuplicates(["o_custkey"]).select("o_custkey").filter("o_custkey > 100"),
        "window": o.withColumn("r", F.row_number().over(Window.partitionBy("o_custkey").orderBy("o_id"))).filter(
            "o_custkey = 3"
        ),
        "explode": o.withColumn("w", F.explode(F.split("o_comment", " "))).filter("o_custkey = 3"),
        "orderBy and limit": o.orderBy(F.col("o_totalprice").desc_nulls_last(), "o_id")
        .limit(10)
        .filter("o_custkey > 10"),
        "computed group key and aggregate": o.groupBy((F.col("o_custkey") % 5).alias("g"))
        .agg((F.sum("o_totalprice") + 1).alias("s"), F.countDistinct("o_id"))
        .filter("g > 1"),
        "case, like, in": o.withColumn("big", F.when(F.col("o_totalprice") > 500, "big").otherwise("small")).filter(
            F.col("o_comment").like("%final%") & F.col("o_custkey").isin(1, 2, 3)
        ),
        "window functions and frames": o.withColumn("r", F.rank().over(by_customer))
        .withColumn("s", F.sum("o_totalprice").over(by_customer.rowsBetween(-2, 0)))
        .withColumn("m", F.max("o_totalprice").over(Window.partitionBy("o_custkey")))
        .filter("o_custkey < 5 AND r = 1"),
        "explode, then a join and a UDF on the exploded words": o.withColumn("w", F.explode(F.split("o_comment", " ")))
        .join(c, o.o_custkey == c.c_custkey)
        .filter(selective & udf("w")),
        "posexplode": o.select("o_id", F.posexplode_outer(F.split("o_comment", " "))).filter("o_id < 30"),
        "duplicate column names": o.join(c, o.o_custkey == c.c_custkey)
        .select(o.o_id.alias("x"), c.c_custkey.alias("x"), "c_nationkey")
        .filter("c_nationkey = 5"),
    }


CASES = [
    "temp views, F.udf after the join",
    "pandas_udf",
    "join using a column",
    "left join",
    "range and in-memory rows",
    "spark.sql result",
    "union",
    "catalog table",
    "unionByName",
    "dropDuplicates on every column",
    "distinct",
    "dropDuplicates on a subset",
    "window",
    "explode",
    "orderBy and limit",
    "computed group key and aggregate",
    "case, like, in",
    "window functions and frames",
    "explode, then a join and a UDF on the exploded words",
    "posexplode",
    "duplicate column names",
]


#: the cases whose expensive UDF the answer holds above a join with a barrier
HELD = (
    "temp views, F.udf after the join",
    "pandas_udf",
    "join using a column",
    "explode, then a join and a UDF on the exploded words",
    "catalog table",
)


def rows(values: Any) -> Counter:
    return Counter(tuple(r) for r in values)


def optimized(world: Any, df: Any) -> Any:
    _, udf, pandas_udf = world
    return run_dataframe(
        df,
        client=PushdownClient(),
        functions={udf: EXPENSIVE, pandas_udf: EXPENSIVE},
        catalog=catalog(),
        min_time_saved_s=0,  # test data: milliseconds saved, below the runner's default floor
    )


@pytest.mark.parametrize("case", CASES)
def test_each_kind_of_pipeline_gives_the_original_rows_and_schema(world, case):
    original = cases(world)[case]
    result = optimized(world, original)
    assert result.dataframe.schema == original.schema and result.fallback is None
    assert rows(result.collect()) == rows(original.collect())
    # every node and expression read, but dropDuplicates on a subset (which row it keeps is Spark's choice): a leaf
    assert [o.split(":")[0] for o in result.translation.opaque] == (["Deduplicate"] if "subset" in case else [])
    if case in HELD:
        assert result.answer["spark"]["barriers"] and not result.as_written


def test_a_cached_dataframe_below_the_plan_stays_a_cache_hit_and_stays_cached(world):
    spark, udf, _ = world
    orders, customer = spark.table("orders"), spark.table("customer")
    cached = customer.filter("c_nationkey < 20").cache()
    cached.count()
    manager = spark._jsparkSession.sharedState().cacheManager()
    try:
        df = orders.join(cached, orders.o_custkey == cached.c_custkey).filter(
            (cached.c_nationkey == 5) & udf(orders.o_comment)
        )
        result = optimized(world, df)
        assert result.answer["spark"]["barriers"]
        assert any(leaf.cached for leaf in result.translation.leaves)
        assert rows(result.collect()) == rows(df.collect())
        scans = [plans.name(n) for n in plans.walk(plans.executed(result.dataframe))]
        assert "InMemoryTableScanExec" in scans, scans
        assert manager.lookupCachedData(spark._jsparkSession, cached._jdf.queryExecution().analyzed()).isDefined()
        assert not [t for t in spark.catalog.listTables() if t.name.startswith("__pushdown_")]
    finally:
        cached.unpersist()


def test_an_answer_spark_cannot_analyze_runs_the_original_with_the_reason(world, monkeypatch, caplog):
    import pushdown_client.dataframe as runner

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("[UNRESOLVED_ROUTINE] cannot resolve routine")

    original = cases(world)["temp views, F.udf after the join"]
    monkeypatch.setattr(runner, "apply_sql", refuse)
    result = optimized(world, original)
    assert result.dataframe is original and not result.as_written
    assert result.fallback == "RuntimeError: [UNRESOLVED_ROUTINE] cannot resolve routine"
    assert "could not be applied" in caplog.text


def test_a_spark_connect_dataframe_is_refused_clearly():
    """Without a Spark Connect server: an instance of Spark Connect's DataFrame class when its dependencies are
    installed, else an object of a class from that module (what ``check_classic`` looks at)."""
    try:
        from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame

        remote = object.__new__(ConnectDataFrame)
    except ImportError:
        remote = type("DataFrame", (), {"__module__": "pyspark.sql.connect.dataframe"})()
    with pytest.raises(SparkConnectUnsupported, match="Spark Connect DataFrame .* has none"):
        check_classic(remote)
    with pytest.raises(SparkConnectUnsupported):
        run_dataframe(remote, client=PushdownClient())
    with pytest.raises(TypeError, match="expected a PySpark DataFrame"):
        check_classic(object())


def random_pipeline(world: Any, seed: int) -> Any:
    """Filters over NULL-rich columns, an inner/left/semi/anti join, an optional expensive UDF, an aggregate."""
    from pyspark.sql import functions as F

    spark, udf, _ = world
    pick = random.Random(seed)
    o, c = spark.table("orders"), spark.table("customer")
    conditions = [
        F.col("o_totalprice") > pick.choice([100.5, 500.5, 900.5]),
        F.col("o_custkey").isNull() | (F.col("o_custkey") < pick.randint(5, 300)),
        ~(F.col("o_comment").like("%final%")),
        F.col("o_custkey").isin(*pick.sample(range(40), 5)),
    ]
    dims = [
        F.col("c_mktsegment") == pick.choice(["BUILDING", "MACHINERY"]),
        F.col("c_nationkey").isNotNull() & (F.col("c_nationkey") <= pick.randint(1, 24)),
        F.coalesce(F.col("c_nationkey"), F.lit(-1)) != 3,
    ]
    left = o.filter(pick.choice(conditions)) if pick.random() < 0.5 else o
    right = c.filter(pick.choice(dims))
    how = pick.choice(["inner", "inner", "left", "left_semi", "left_anti"])
    joined = left.join(right, left.o_custkey == right.c_custkey, how)
    if pick.random() < 0.6:
        joined = joined.filter(udf(F.col("o_comment")))
    if pick.random() < 0.5:
        joined = joined.filter(pick.choice(conditions))
    if pick.random() < 0.5:
        return joined.groupBy("o_custkey").agg(F.count("*").alias("n"), F.max("o_totalprice").alias("top"))
    return joined.withColumn("twice", F.col("o_totalprice") * 2)


@pytest.mark.parametrize("seed", range(6))
def test_random_pipelines_give_the_original_rows_and_schema(world, seed):
    original = random_pipeline(world, seed)
    result = optimized(world, original)
    assert result.dataframe.schema == original.schema
    assert rows(result.collect()) == rows(original.collect())


def test_an_applied_answer_keeps_an_unaliased_aggregates_metadata(world):
    """Regression (TPC-H q18 in the DataFrame API): ``F.sum(c)`` without an alias is named ``sum(c)`` with Spark's
    ``__autoGeneratedAlias`` metadata; the answer applied through its SQL names it by alias, and the metadata has
    to be carried back for the schema to be the original's."""
    from pyspark.sql import functions as F

    spark, udf, _ = world
    o, c = spark.table("orders"), spark.table("customer")
    df = (
        o.join(c, o.o_custkey == c.c_custkey)
        .filter((c.c_mktsegment == "BUILDING") & (c.c_nationkey == 5) & udf(o.o_comment))
        .groupBy("c_name")
        .agg(F.sum("o_totalprice"))
    )
    assert df.schema.fields[1].metadata == {"__autoGeneratedAlias": "true"}
    result = optimized(world, df)
    assert result.answer["spark"]["barriers"] and not result.as_written and result.fallback is None
    assert result.dataframe.schema == df.schema
    assert rows(result.collect()) == rows(df.collect())


def test_an_applied_answer_keeps_a_column_nullable_that_the_rewrite_made_non_nullable(world):
    """Regression (the DataFrame differential campaign, seed 1011): a ``coalesce`` column is non-nullable on its own
    and nullable out of a full join; a filter on that side turns the join into a left join, where the column stays
    non-nullable. The original's nullability must come back, with nothing left of it in the optimized plan."""
    from pyspark.sql import functions as F

    spark, udf, _ = world
    o, c = spark.table("orders"), spark.table("customer")
    priced = o.withColumn("price", F.coalesce(o.o_totalprice, F.lit(0.0)))
    df = priced.join(c, priced.o_custkey == c.c_custkey, "full").filter(
        (F.col("o_id") > 5) & (F.col("c_nationkey") == 5) & udf(F.col("o_comment"))
    )
    assert df.schema["price"].nullable
    result = optimized(world, df)
    assert result.answer["spark"]["barriers"] and not result.as_written and result.fallback is None
    assert result.dataframe.schema == df.schema
    assert rows(result.collect()) == rows(df.collect())
    optimized_plan = str(result.dataframe._jdf.queryExecution().optimizedPlan().toString())
    assert "isnull(coalesce" not in optimized_plan.replace(" ", "").lower(), optimized_plan


def test_a_date_literal_is_read_so_the_filter_is_the_services_to_place(world):
    """``F.lit(datetime.date(...))`` is a date literal (days since 1970 in Spark): read as the wire's date, not left
    opaque with everything under it (which hid an early UDF from the service in the pull-up workload's p06)."""
    import datetime as dt

    from pyspark.sql import functions as F

    from costmodel.wire.nodes import node_dicts
    from pushdown_client.dataframe_plan import translate

    spark, udf, _ = world
    o, c = spark.table("orders"), spark.table("customer")
    due = F.date_add(F.lit(dt.date(2019, 12, 25)), o.o_id)
    df = o.join(c, o.o_custkey == c.c_custkey).filter(
        (due > F.lit(dt.date(2020, 1, 1))) & (c.c_nationkey == 5) & udf(o.o_comment)
    )
    translation = translate(df)
    assert not [why for why in translation.opaque if "date literal" in why], translation.opaque
    assert '{"lit": "2020-01-01", "type": "date"}' in json.dumps(
        [n.get("predicate") for n in node_dicts(translation.plan)]
    )
    result = optimized(world, df)
    assert result.dataframe.schema == df.schema
    assert rows(result.collect()) == rows(df.collect()) and rows(df.collect())
