"""Done-when of the DataFrame issue: a pipeline written the way people write them (Parquet, an expensive ``F.udf``
that was never registered, two selective dimensions, an aggregate) optimized by ``run_dataframe`` evaluates the
UDF only on the joined rows, read off Spark's executed plan and a Python accumulator, with the original schema;
with a cheap UDF the answer runs as written and the DataFrame is the caller's own."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from pushdown_client.dataframe import optimize_dataframe, run_dataframe
from service.client import PushdownClient
from tests.spark import plans
from tests.spark.world import CUSTOMER_DDL, ORDERS_DDL, catalog, customer_rows, orders_rows

NATION_DDL = "n_nationkey INT, n_regionkey INT, n_name STRING"
EXPENSIVE = 5000
CHEAP = 0.1


def nation_rows() -> list[tuple[Any, ...]]:
    return [(i, None if i == 7 else (i % 10) // 2, f"NATION{i}") for i in range(25)]


@pytest.fixture(scope="module")
def world(spark, tmp_path_factory):
    """Three Parquet files and a Python UDF made with ``F.udf`` (not registered), its calls counted."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    root = tmp_path_factory.mktemp("dataframe")
    for name, rows, ddl in (
        ("orders", orders_rows(), ORDERS_DDL),
        ("customer", customer_rows(), CUSTOMER_DDL),
        ("nation", nation_rows(), NATION_DDL),
    ):
        spark.createDataFrame(rows, ddl).coalesce(1).write.parquet(str(root / name))
    calls = spark.sparkContext.accumulator(0)

    def looks_fine(text):  # no type hints: PySpark would try to infer a pandas UDF from them
        calls.add(1)
        return None if text is None else len(text) % 3 != 0

    udf = F.udf(looks_fine, BooleanType())
    return spark, root, udf, calls


def read(world: Any) -> tuple[Any, Any, Any]:
    spark, root, _, _ = world
    return tuple(spark.read.parquet(str(root / name)) for name in ("orders", "customer", "nation"))


def pipeline(world: Any, early: bool, select_away: bool = False) -> Any:
    """Orders scored by the UDF (written before the joins when ``early``, else after them), joined to BUILDING
    customers of region 0's nations, revenue per nation. ``select_away``: after the early filter, only the columns
    the joins and the aggregate need are selected (the UDF's own is not)."""
    from pyspark.sql import functions as F

    _, _, udf, _ = world
    orders, customer, nation = read(world)
    if early:
        orders = orders.filter(udf(F.col("o_comment")))
    if select_away:
        orders = orders.select("o_custkey", "o_totalprice")
    joined = orders.join(customer.filter(F.col("c_mktsegment") == "BUILDING"), F.col("o_custkey") == F.col("c_custkey"))
    joined = joined.join(nation.filter(F.col("n_regionkey") == 0), F.col("c_nationkey") == F.col("n_nationkey"))
    if not early:
        joined = joined.filter(udf(F.col("o_comment")))
    return joined.groupBy("n_name").agg(F.count("*").alias("orders"), F.sum("o_totalprice").alias("revenue"))


def joined_rows(world: Any) -> int:
    from pyspark.sql import functions as F

    orders, customer, nation = read(world)
    joined = orders.join(customer.filter(F.col("c_mktsegment") == "BUILDING"), F.col("o_custkey") == F.col("c_custkey"))
    return joined.join(nation.filter(F.col("n_regionkey") == 0), F.col("c_nationkey") == F.col("n_nationkey")).count()


def statistics() -> dict[str, Any]:
    """What an analyze would report, keyed by the leaves' labels (their files' names)."""
    tables = catalog()["tables"]
    tables["nation"] = {"row_count": 25, "column_stats": {"n_regionkey": {"ndv": 5, "null_count": 1}}}
    return {"tables": tables}


def run(world: Any, df: Any, cost: float) -> Any:
    _, _, udf, _ = world
    return run_dataframe(
        df, client=PushdownClient(), functions={udf: {"cost": cost}}, catalog=statistics(), min_time_saved_s=0
    )


def counted(world: Any, action: Any) -> tuple[Any, int]:
    calls = world[3]
    start = calls.value
    result = action()
    return result, calls.value - start


def rows(values: Any) -> Counter:
    return Counter(tuple(r) for r in values)


def assert_udf_above_the_joins(df: Any) -> None:
    (evaluation,) = plans.python_evals(df)
    assert plans.JOINS & plans.below(evaluation), "the UDF is evaluated on the joins' output"


def check_held_above_the_joins(world: Any, early: bool, select_away: bool = False) -> None:
    original = pipeline(world, early, select_away)
    result = run(world, original, EXPENSIVE)
    assert not result.as_written and result.answer["spark"]["barriers"], result.answer["spark"]
    got, calls = counted(world, result.collect)
    assert 0 < calls == joined_rows(world)
    assert_udf_above_the_joins(result.dataframe)
    assert result.dataframe.schema == original.schema  # names, order, types, nullability
    assert rows(got) == rows(pipeline(world, early, select_away).collect())


def test_an_expensive_udf_written_after_the_joins_runs_on_the_joined_rows_only(world):
    check_held_above_the_joins(world, early=False)


def test_an_expensive_udf_written_before_the_joins_runs_on_the_joined_rows_only(world):
    check_held_above_the_joins(world, early=True)


def test_an_expensive_udf_whose_column_is_selected_away_before_the_joins_runs_on_the_joined_rows_only(world):
    """filter, select, join: the UDF's column is carried through the joins to it and dropped again above."""
    check_held_above_the_joins(world, early=True, select_away=True)


@pytest.mark.parametrize("early", [True, False])
def test_a_cheap_udf_is_left_where_spark_puts_it_and_the_dataframe_is_the_original(world, early):
    original = pipeline(world, early)
    result = run(world, original, CHEAP)
    assert result.as_written and not result.answer["spark"]["barriers"]
    assert result.dataframe is original


def test_optimize_dataframe_returns_the_rewritten_dataframe(world):
    original = pipeline(world, early=False)
    _, _, udf, _ = world
    optimized = optimize_dataframe(
        original, client=PushdownClient(), functions={"looks_fine": {"cost": EXPENSIVE}}, min_time_saved_s=0
    )
    assert optimized is not original and optimized.schema == original.schema
    got, calls = counted(world, optimized.collect)
    assert calls == joined_rows(world)
    assert rows(got) == rows(pipeline(world, early=False).collect())
