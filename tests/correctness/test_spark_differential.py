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


def _rows_and_schema(frame) -> tuple[Counter, list[tuple[str, str]]]:
    rows = Counter(tuple(_normalize(v) for v in row) for row in frame.collect())
    return rows, [(f.name, f.dataType.simpleString()) for f in frame.schema.fields]


#: seeds of the DuckDB campaign's generator whose early-written plans have a predicate that rises (found once
#: per run: the plans the engine pulls up in, so the Spark time goes to them)
RISING_SEEDS = 300


def test_pulled_up_predicates_return_the_same_rows_names_and_types_on_spark(spark_world):
    """Plans written with every predicate as deep as legal, placed again with every predicate expensive: the ones
    that rise are held above by barriers in the Spark SQL (``spark_target``), and Spark returns the same rows
    under the same column names and types as the early-written plan."""
    from service.spark_plan import spark_target
    from tests.correctness.test_rewrites_preserve_results import RISING

    spark, cat = spark_world
    checked = 0
    for seed in range(RISING_SEEDS):
        early = optimize_wire(PlanGenerator(random.Random(seed)).query(), cat, {"mode": "always"})["plan"]
        answer = optimize_wire(early, cat, RISING)
        if not any(d.get("action") == "pulled_up" for d in answer["decisions"]):
            continue
        target = spark_target(answer["plan"], answer["decisions"], cat)
        assert target.barriers, answer["decisions"]
        expected = _rows_and_schema(to_dataframe(spark, early, cat))
        got = _rows_and_schema(spark.sql(target.sql))
        assert got == expected, f"seed {seed}\n{target.sql}\n--- after\n{answer['explain']['after']}"
        checked += 1
    assert checked >= 5, checked
