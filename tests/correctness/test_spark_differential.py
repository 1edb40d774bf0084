"""Rewrites never change results on Spark either: random plans, original and rewritten, run as DataFrames.

The same generator as the DuckDB campaign, fewer plans (a Spark query costs far more than a DuckDB one).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from costmodel import optimize_wire
from service.spark_plan import to_dataframe
from tests.correctness.plangen import TABLES, PlanGenerator, catalog, make_rows
from tests.spark_session import get_spark, java_available

pytestmark = pytest.mark.skipif(not java_available(), reason="local Spark needs a Java runtime")

PLANS = 50


def _normalize(value: Any) -> Any:
    return round(float(value), 6) if isinstance(value, float) else value


@pytest.fixture(scope="module")
def spark_world():
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    spark = get_spark()
    # outside ANSI mode a failing cast is NULL: Catalyst reorders filters freely, so errors would depend
    # on its choices, not on the plan's; the DuckDB campaign checks errors with DuckDB's optimizer off
    spark.conf.set("spark.sql.ansi.enabled", "false")
    rng = random.Random(20261122)
    rows = {name: make_rows(rng, name, 30) for name in TABLES}
    for name, columns in TABLES.items():
        schema = StructType(
            [StructField(col, IntegerType() if typ == "int" else StringType(), True) for col, typ in columns]
        )
        spark.createDataFrame(rows[name], schema).createOrReplaceTempView(name)
    return spark, catalog(rows)


def _multiset(spark, plan: dict[str, Any], cat: dict[str, Any]) -> Counter:
    return Counter(tuple(_normalize(v) for v in row) for row in to_dataframe(spark, plan, cat).collect())


@pytest.mark.parametrize("seed", range(PLANS))
def test_rewritten_plan_returns_the_same_rows_on_spark(spark_world, seed):
    spark, cat = spark_world
    plan = PlanGenerator(random.Random(seed)).query()
    expected = _multiset(spark, plan, cat)
    result = optimize_wire(plan, cat, {"mode": "always"})
    got = _multiset(spark, result["plan"], cat)
    assert got == expected, f"--- before\n{result['explain']['before']}\n--- after\n{result['explain']['after']}"
