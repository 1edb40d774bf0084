"""Done-when of issue 13: through the runner, from Spark's default settings, a declared expensive UDF kept above
a selective join is evaluated only on the join's output, for a collect and for table writes; the caller's
session settings are unchanged afterwards; the result has the original query's column names and types."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from service.client import PushdownClient
from service.spark_plan import EXCLUDED_RULES_KEY, FALLBACK_EXCLUDED_RULES
from service.spark_runner import run_sql, session_settings
from tests.spark import plans
from tests.spark.world import CountingUdf, catalog, register

SQL = (
    "SELECT o.o_id AS id, o.o_totalprice, c.c_name, o.o_totalprice * 2 FROM orders o "
    "JOIN customer c ON o.o_custkey = c.c_custkey "
    "WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5 AND expensive_check(o.o_comment)"
)
JOINED = (
    "SELECT count(*) FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
    "WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5"
)
FUNCTIONS = {"expensive_check": {"cost": 5000}}


@pytest.fixture(scope="module")
def world(spark, tmp_path_factory):
    register(spark)
    udf = CountingUdf(spark)
    return spark, udf, spark.sql(JOINED).first()[0], tmp_path_factory.mktemp("runner")


def settings(spark: Any) -> dict[str, str]:
    return dict(spark.conf.getAll)


def run(spark: Any) -> Any:
    return run_sql(spark, SQL, client=PushdownClient(), catalog=catalog(), functions=FUNCTIONS, min_time_saved_s=0)


def rows(values: Any) -> Counter:
    return Counter(tuple(values_row) for values_row in values)


def test_collect_evaluates_the_udf_on_the_join_output_only(world):
    spark, udf, joined, _ = world
    before = settings(spark)
    assert EXCLUDED_RULES_KEY not in before, "starts from Spark's defaults"
    result = run(spark)
    got, calls = udf.count(result.collect)
    assert 0 < calls == joined
    expected = spark.sql(SQL)
    assert result.dataframe.columns == expected.columns
    assert result.dataframe.dtypes == expected.dtypes
    assert rows(got) == rows(expected.collect())
    assert settings(spark) == before
    assert result.answer["cost"]["savings_vs_baseline"] > 0


def test_table_writes_evaluate_the_udf_on_the_join_output_only(world):
    spark, udf, joined, tmp = world
    before = settings(spark)
    result = run(spark)
    expected = rows(spark.sql(SQL).collect())

    _, calls = udf.count(lambda: result.save_as_table("runner_out", mode="overwrite", path=str(tmp / "out")))
    assert 0 < calls == joined
    assert rows(spark.table("runner_out").collect()) == expected
    assert spark.table("runner_out").columns == spark.sql(SQL).columns

    _, calls = udf.count(lambda: result.insert_into("runner_out", overwrite=True))
    assert calls == joined and rows(spark.table("runner_out").collect()) == expected

    _, calls = udf.count(lambda: result.write_parquet(str(tmp / "parquet"), mode="overwrite"))
    assert calls == joined and rows(spark.read.parquet(str(tmp / "parquet")).collect()) == expected
    assert settings(spark) == before
    spark.sql("DROP TABLE IF EXISTS runner_out")


VIEW_SQL = (
    "SELECT v.c_name FROM callers_view v JOIN orders o ON o.o_custkey = v.c_custkey WHERE expensive_check(o.o_comment)"
)


def test_caller_views_and_udfs_are_used_from_the_same_session(world):
    spark, _, _, _ = world
    spark.sql("SELECT * FROM customer WHERE c_nationkey = 5").createOrReplaceTempView("callers_view")
    result = run_sql(spark, VIEW_SQL, functions=FUNCTIONS)  # catalog read from the session, view included
    assert "callers_view" in result.answer["spark"]["sql"]
    assert result.count() == spark.sql(VIEW_SQL).count()


def test_session_settings_restores_set_and_unset_keys_exactly(spark):
    spark.conf.set("spark.sql.shuffle.partitions", "3")
    before = settings(spark)
    wanted = {EXCLUDED_RULES_KEY: FALLBACK_EXCLUDED_RULES, "spark.sql.shuffle.partitions": "7"}
    with session_settings(spark, wanted):
        assert spark.conf.get(EXCLUDED_RULES_KEY) == FALLBACK_EXCLUDED_RULES
        assert spark.conf.get("spark.sql.shuffle.partitions") == "7"
    assert settings(spark) == before
    with pytest.raises(RuntimeError), session_settings(spark, wanted):
        raise RuntimeError("a failing action")
    assert settings(spark) == before
    spark.conf.set("spark.sql.shuffle.partitions", "2")


def test_an_answers_settings_hold_during_each_action_only(world):
    """Settings an answer carries are on while a write plans and runs (a write plans its query again) and the
    caller's own values are back afterwards."""
    from service.spark_runner import SparkRun

    spark, _, _, tmp = world
    before = settings(spark)
    seen: list[str] = []
    run = SparkRun(spark, {}, spark.sql("SELECT 1 AS x"), {"spark.sql.shuffle.partitions": "7"})  # type: ignore[arg-type]

    def write(writer: Any) -> None:
        seen.append(spark.conf.get("spark.sql.shuffle.partitions"))
        writer.mode("overwrite").parquet(str(tmp / "held"))

    run.write(write)
    assert seen == ["7"] and settings(spark) == before
    assert run.count() == 1 and settings(spark) == before


def test_a_query_run_as_written_is_analyzed_once_and_gives_the_original_s_result(world, monkeypatch):
    """No predicate kept: the answer says ``as_written`` and the runner runs the DataFrame it analyzed already."""
    spark, _, _, _ = world
    asked: list[str] = []
    analyze = spark.sql
    monkeypatch.setattr(spark, "sql", lambda text, *a, **k: asked.append(text) or analyze(text, *a, **k))
    result = run_sql(spark, JOINED, client=PushdownClient(), catalog=catalog())
    assert result.answer["spark"]["as_written"] is True and asked == [JOINED]
    monkeypatch.undo()
    assert result.collect() == spark.sql(JOINED).collect()


def test_a_query_run_as_written_has_each_pushed_predicate_at_its_scan_in_spark_s_executed_plan(world):
    """``as_written`` rests on Catalyst placing, under its defaults, every predicate where the answer does: read off
    the plan Spark executed, each predicate the answer pushed sits on its table's scan, below the join, and none
    stays above it."""
    spark, _, _, _ = world
    result = run_sql(spark, JOINED, client=PushdownClient(), catalog=catalog())
    assert result.answer["spark"]["as_written"] is True
    pushed = {"c_mktsegment": "BUILDING", "c_nationkey": "5"}
    for column in pushed:  # the answer's own placement: pushed into the customer scan
        (entry,) = [e for e in result.answer["summary"] if column in e["predicate"]]
        assert entry["stopped"] == "reached the scan" and entry["scans_reached"] == ["TableScan customer (n6)"]
    at_scans = plans.scan_filters(result.dataframe)
    for column, value in pushed.items():
        assert any(f"{column}#" in f and value in f for f in at_scans), (column, at_scans)
    nodes = plans.walk(plans.executed(result.dataframe))
    assert any(plans.name(n) in plans.JOINS for n in nodes), "the query joins"
    above = [n.condition().toString() for n in nodes if plans.name(n) == "FilterExec" and plans.JOINS & plans.below(n)]
    assert not [c for c in above if any(f"{column}#" in c for column in pushed)], above
    assert rows(result.collect()) == rows(spark.sql(JOINED).collect())
