"""Under Spark's default settings, every predicate the service keeps above a join, an aggregate or a window
stays there: read off Spark's executed plan, with the same query's plain SQL (no barrier) as the control
showing that Catalyst would otherwise have moved it. Results match the query as written."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from costmodel import optimize_wire
from service.client import PushdownClient
from service.spark_plan import EXCLUDED_RULES_KEY, FALLBACK_EXCLUDED_RULES, spark_target, to_sql
from service.spark_runner import session_settings
from tests.spark import plans
from tests.spark.world import CountingUdf, catalog, register

JOIN_SQL = (
    "SELECT o.o_id AS id, o.o_totalprice, c.c_name FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
    "WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5 AND expensive_check(o.o_comment)"
)
AGG_SQL = (
    "SELECT g.o_custkey, g.n FROM (SELECT o_custkey, count(*) AS n, max(o_comment) AS m FROM orders "
    "GROUP BY o_custkey) g WHERE expensive_check(CAST(g.o_custkey AS STRING))"
)
WINDOW_SQL = (
    "SELECT * FROM (SELECT o_custkey, o_id, rank() OVER (PARTITION BY o_custkey ORDER BY o_totalprice) AS r "
    "FROM orders) w WHERE w.o_custkey % 7 = 1"
)
FUNCTIONS = {"expensive_check": {"cost": 5000}}


@pytest.fixture(scope="module")
def world(spark):
    assert spark.conf.get(EXCLUDED_RULES_KEY, None) in (None, ""), "these tests start from Spark's defaults"
    register(spark)
    return spark, CountingUdf(spark)


def answer(sql: str, mode: str = "cost") -> dict[str, Any]:
    return PushdownClient().optimize(sql, catalog=catalog(), functions=FUNCTIONS, mode=mode)


def rows(df: Any) -> Counter:
    return Counter(tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in df.collect())


def assert_same_result(spark: Any, original: str, rewritten: str) -> None:
    want, got = spark.sql(original), spark.sql(rewritten)
    assert [f.dataType for f in got.schema.fields] == [f.dataType for f in want.schema.fields]
    assert rows(got) == rows(want)


def test_udf_kept_above_a_selective_join_stays_above_it(world):
    spark, udf = world
    a = answer(JOIN_SQL)
    assert a["spark"]["conf"] == {} and a["spark"]["barriers"] == ["expensive_check(o.o_comment)"]
    fenced = spark.sql(a["spark"]["sql"])
    (evaluation,) = plans.python_evals(fenced)
    _, calls = udf.count(fenced.collect)
    assert plans.JOINS & plans.below(evaluation), "the UDF is evaluated on the join's output"
    joined = spark.sql(
        "SELECT count(*) FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
        "WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5"
    ).first()[0]
    assert 0 < calls == joined
    # control: the same placement without the barrier, under the same defaults, is moved below the join
    plain = spark.sql(to_sql(a["plan"], catalog()))
    (moved,) = plans.python_evals(plain)
    _, plain_calls = udf.count(plain.collect)
    assert not plans.JOINS & plans.below(moved) and plain_calls > 10 * calls
    assert_same_result(spark, JOIN_SQL, a["spark"]["sql"])


def test_udf_kept_above_an_aggregate_stays_above_it(world):
    spark, udf = world
    a = answer(AGG_SQL)
    assert a["spark"]["barriers"], a["decisions"]
    fenced = spark.sql(a["spark"]["sql"])
    (evaluation,) = plans.python_evals(fenced)
    assert plans.AGGREGATES & plans.below(evaluation)
    _, calls = udf.count(fenced.collect)
    groups = spark.sql("SELECT count(DISTINCT o_custkey) + 1 FROM orders").first()[0]  # NULL is a group too
    assert calls == groups
    plain = spark.sql(to_sql(a["plan"], catalog()))
    (moved,) = plans.python_evals(plain)
    assert not plans.AGGREGATES & plans.below(moved)
    assert_same_result(spark, AGG_SQL, a["spark"]["sql"])


def test_filter_kept_above_a_window_stays_above_it(world):
    spark, _ = world
    a = answer(WINDOW_SQL, mode="never")
    fenced = spark.sql(a["spark"]["sql"])
    fenced.collect()
    (barrier,) = plans.filters_with(fenced, plans.BARRIER)
    assert "% 7" in barrier.condition().toString() and plans.WINDOWS & plans.below(barrier)
    # the IS NOT NULL the barrier keeps Catalyst from inferring is in the rewrite, and Catalyst pushes it
    assert any("isnotnull(o_custkey" in f for f in plans.scan_filters(fenced))
    plain = spark.sql(to_sql(a["plan"], catalog()))
    plain.collect()
    assert any("% 7" in f for f in plans.scan_filters(plain)), "control: Catalyst pushes it through the window"
    assert_same_result(spark, WINDOW_SQL, a["spark"]["sql"])


def test_decisions_that_agree_with_rule_based_pushdown_need_no_barrier(world):
    spark, _ = world
    a = answer(WINDOW_SQL)
    assert a["spark"] == {**a["spark"], "conf": {}, "barriers": []}
    assert plans.BARRIER not in a["spark"]["sql"]


def test_barrier_keeps_other_conjuncts_free_to_move(world):
    """A cheap conjunct in the same WHERE as a barrier still reaches the scan."""
    spark, _ = world
    sql = JOIN_SQL + " AND o.o_totalprice > 100"
    a = answer(sql)
    fenced = spark.sql(a["spark"]["sql"])
    fenced.collect()
    assert any("o_totalprice" in f and "100" in f for f in plans.scan_filters(fenced))
    assert_same_result(spark, sql, a["spark"]["sql"])


@pytest.mark.parametrize("seed", range(12))
def test_barriered_sql_returns_the_same_rows_on_random_plans(spark, seed):
    """Random plans with every predicate kept where it is written (mode never: a barrier on each)."""
    from tests.correctness.plangen import TABLES, PlanGenerator, make_rows
    from tests.correctness.plangen import catalog as plangen_catalog

    rng = random.Random(20261123 + seed)
    data = {name: make_rows(rng, name, 30) for name in TABLES}
    for name, columns in TABLES.items():
        ddl = ", ".join(f"{col} {'INT' if typ == 'int' else 'STRING'}" for col, typ in columns)
        spark.createDataFrame(data[name], ddl).createOrReplaceTempView(name)
    cat = plangen_catalog(data)
    plan = PlanGenerator(random.Random(seed)).query()
    result = optimize_wire(plan, cat, {"mode": "never"})
    target = spark_target(result["plan"], result["decisions"], cat)
    assert rows(spark.sql(target.sql)) == rows(spark.sql(to_sql(plan, cat)))


ON_SQL = (
    "SELECT o.o_id, c.c_name FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey AND c.c_nationkey = 5 "
    "AND expensive_check(o.o_comment)"
)


def test_kept_inner_join_conditions_move_above_the_join_behind_a_barrier(world):
    """Spark refuses a non-deterministic join condition, so a kept conjunct of an inner join's ON goes to a
    filter right above the join (the same rows), where its barrier holds it."""
    spark, udf = world
    a = answer(ON_SQL, mode="never")
    assert a["spark"]["conf"] == {} and "expensive_check(o.o_comment)" in a["spark"]["barriers"]
    fenced = spark.sql(a["spark"]["sql"])
    (evaluation,) = plans.python_evals(fenced)
    assert plans.JOINS & plans.below(evaluation)
    assert_same_result(spark, ON_SQL, a["spark"]["sql"])


def test_a_kept_outer_join_condition_is_left_to_spark_and_says_so(world):
    """No barrier fits in a join condition, and settings would not hold it either: with the smallest rule set
    excluded, InferFiltersFromConstraints still copies the condition into the join's side (read off the plan)."""
    spark, _ = world
    sql = (
        "SELECT o.o_id, c.c_name FROM orders o LEFT JOIN customer c ON o.o_custkey = c.c_custkey AND c.c_nationkey = 5"
    )
    a = answer(sql, mode="never")
    assert a["spark"]["conf"] == {} and "c.c_nationkey = 5" in a["spark"]["left_to_spark"]
    assert any("c.c_nationkey = 5" in w and "Spark may move" in w for w in a["warnings"])
    assert_same_result(spark, sql, a["spark"]["sql"])
    with session_settings(spark, {EXCLUDED_RULES_KEY: FALLBACK_EXCLUDED_RULES}):
        excluded = spark.sql(a["spark"]["sql"])
        excluded.collect()
        assert any("c_nationkey" in f for f in plans.scan_filters(excluded))
