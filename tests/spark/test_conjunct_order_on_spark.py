"""Conjunct order reaches Spark: where the answer puts a cheap comparison before an expensive test Spark evaluates in
its own generated code (a regular expression), the answer's SQL is sent instead of the query as written, and
Spark's executed Filter tests the comparison first (a conjunction stops at its first false)."""

from __future__ import annotations

from collections import Counter

from service.client import PushdownClient
from service.spark_runner import run_sql
from tests.spark.world import catalog, register

WRITTEN = "SELECT o_id, o_totalprice FROM orders WHERE o_comment RLIKE '[a-z]+ly' AND o_totalprice > 100"


def _filter_line(frame) -> str:
    plan = str(frame._jdf.queryExecution().executedPlan().toString())
    return next(line for line in plan.splitlines() if "Filter" in line)


def test_an_expensive_conjunct_written_first_runs_after_the_comparison(spark):
    register(spark)
    # test data: the reorder saves milliseconds, below the runner's default floor (min_time_saved_s)
    result = run_sql(spark, WRITTEN, client=PushdownClient(), catalog=catalog(), min_time_saved_s=0)
    assert result.answer["spark"].get("conjunct_order") and not result.answer["spark"].get("as_written")
    assert result.answer["spark"]["barriers"] == []
    original = _filter_line(spark.sql(WRITTEN))
    answered = _filter_line(result.dataframe)
    assert original.index("RLIKE(") < original.index("> 100")  # Spark keeps the order as written
    assert answered.index("> 100") < answered.index("RLIKE("), answered  # and the answer's
    expected = spark.sql(WRITTEN)
    assert result.dataframe.columns == expected.columns and result.dataframe.dtypes == expected.dtypes
    assert Counter(map(tuple, result.collect())) == Counter(map(tuple, expected.collect()))


def test_a_query_already_in_rank_order_runs_as_written(spark):
    register(spark)
    ordered = "SELECT o_id, o_totalprice FROM orders WHERE o_totalprice > 100 AND o_comment RLIKE '[a-z]+ly'"
    result = run_sql(spark, ordered, client=PushdownClient(), catalog=catalog())
    assert result.answer["spark"].get("as_written") is True and "conjunct_order" not in result.answer["spark"]
