"""The ``sample`` kind on real Spark: a seeded ``TABLESAMPLE`` under a join and filters, through the runner, and a
DataFrame ``df.sample(fraction=0.3, seed=7)`` pipeline through ``optimize_dataframe``, return exactly the original's
rows (names, types, schema); every filter above the sample stays above it, where Spark keeps it too."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from costmodel.wire.nodes import node_dicts
from pushdown_client.dataframe import optimize_dataframe
from pushdown_client.dataframe_plan import translate
from service.client import PushdownClient
from service.spark_runner import run_sql
from tests.spark.world import CUSTOMER_DDL, ORDERS_DDL, catalog, customer_rows, orders_rows, register

SQL = (
    "SELECT o.o_id, o.o_totalprice, c.c_name FROM orders TABLESAMPLE (30 PERCENT) REPEATABLE (7) AS o "
    "JOIN customer c ON o.o_custkey = c.c_custkey "
    "WHERE c.c_mktsegment = 'BUILDING' AND o.o_totalprice > 100 AND expensive_check(o.o_comment)"
)
FUNCTIONS = {"expensive_check": {"cost": 5000}}


def rows(values: Any) -> Counter:
    return Counter(tuple(row) for row in values)


@pytest.fixture(scope="module")
def world(spark):
    register(spark)
    spark.udf.register("expensive_check", lambda text: text is not None and len(text) % 3 != 0, "boolean")
    return spark


def test_a_seeded_tablesample_under_a_join_returns_the_original_rows(world):
    spark = world
    result = run_sql(spark, SQL, client=PushdownClient(), catalog=catalog(), functions=FUNCTIONS)
    stopped = {entry["predicate"]: entry["stopped"] for entry in result.answer["summary"]}
    assert stopped["o.o_totalprice > 100"].startswith("blocked: sample"), stopped  # down to the sample, no further
    assert stopped["expensive_check(o.o_comment)"].startswith("not_beneficial"), stopped  # held above the join
    assert "TABLESAMPLE (30 PERCENT) REPEATABLE (7)" in result.answer["spark"]["sql"]
    expected = spark.sql(SQL)
    got = result.collect()
    assert result.dataframe.columns == expected.columns and result.dataframe.dtypes == expected.dtypes
    assert rows(got) == rows(expected.collect()) and len(got) > 0
    unsampled = spark.sql(SQL.replace(" TABLESAMPLE (30 PERCENT) REPEATABLE (7)", "")).count()
    assert len(got) < unsampled  # the sample is in the query that ran


@pytest.fixture(scope="module")
def parquet(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("sample")
    spark.createDataFrame(orders_rows(), ORDERS_DDL).coalesce(1).write.parquet(str(root / "orders"))
    spark.createDataFrame(customer_rows(), CUSTOMER_DDL).coalesce(1).write.parquet(str(root / "customer"))
    return spark, root


def sampled_pipeline(parquet: Any) -> Any:
    """Sampled orders joined to BUILDING customers, then an expensive UDF (which the service holds above the join):
    a rewrite the service makes, so the DataFrame that runs is rebuilt from the answer's SQL."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    spark, root = parquet
    looks_fine = F.udf(lambda text: text is not None and len(text) % 3 != 0, BooleanType())
    orders = spark.read.parquet(str(root / "orders")).sample(fraction=0.3, seed=7)
    customer = spark.read.parquet(str(root / "customer")).filter(F.col("c_mktsegment") == "BUILDING")
    joined = orders.join(customer, F.col("o_custkey") == F.col("c_custkey"))
    joined = joined.filter(F.col("o_totalprice") > 100).filter(looks_fine(F.col("o_comment")))
    return joined.select("o_id", "o_totalprice", "c_name")


def test_a_dataframe_sample_keeps_its_rows(parquet):
    """``df.sample(fraction=0.3, seed=7)`` is read as the sample kind (its seed kept): the rewritten DataFrame draws
    the same rows. (PySpark's ``df.sample(0.3, seed=7)`` ignores the seed and draws other rows on every call.)"""
    original = sampled_pipeline(parquet)
    assert [n["seed"] for n in node_dicts(translate(original).plan) if n["op"] == "sample"] == [7]
    optimized = optimize_dataframe(
        original, client=PushdownClient(), functions={"<lambda>": {"cost": 5000}}, min_time_saved_s=0
    )
    assert optimized is not original
    assert "Sample 0.0, 0.3, false, 7," in optimized._jdf.queryExecution().analyzed().toString()
    assert optimized.schema == original.schema  # names, order, types, nullability
    got = optimized.collect()
    assert rows(got) == rows(sampled_pipeline(parquet).collect()) and len(got) > 0


def test_a_sample_fraction_sql_cannot_spell_exactly_stays_inside_a_leaf(parquet):
    """0.4494910647887381 has no PERCENT that Spark's parser divides back to the same double: the reader keeps the
    sample whole in a leaf (the DataFrame itself), so the same rows are drawn."""
    spark, root = parquet
    original = spark.read.parquet(str(root / "orders")).sample(fraction=0.4494910647887381, seed=3)
    original = original.filter("o_totalprice > 100").select("o_id", "o_comment")
    assert not [n for n in node_dicts(translate(original).plan) if n["op"] == "sample"]
    optimized = optimize_dataframe(original, client=PushdownClient(), min_time_saved_s=0)
    assert optimized.schema == original.schema
    assert rows(optimized.collect()) == rows(original.collect())
