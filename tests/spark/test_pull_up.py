"""Pull-up on Spark: a declared expensive UDF written early (a CTE, a derived table, one that does not select the
column the UDF reads, an inner join's ON, a temporary view) below a selective join runs, through the runner from
Spark's defaults, above the join: read off Spark's executed plan (the Python evaluation has the join below it, no
join has one below it; the query as written is the control, evaluating it under the join), called once per row the
join keeps (an accumulator), and giving the original's rows, column names, order and types. A join that keeps every
row does not pay: the answer runs as written."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from service.client import PushdownClient
from service.spark_runner import run_sql
from tests.spark import plans
from tests.spark.world import CountingUdf, catalog, register

FUNCTIONS = {"expensive_check": {"cost": 5000}}
SELECTIVE = "c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5"
JOIN = "JOIN customer c ON o.o_custkey = c.c_custkey"
#: the rows the selective join keeps: what the UDF sees above it
JOINED = f"SELECT count(*) FROM orders o {JOIN} WHERE {SELECTIVE}"
VIEW = "checked_orders_view"

FORMS = {
    "cte": (
        "WITH checked AS (SELECT * FROM orders WHERE expensive_check(o_comment)) "
        f"SELECT o.o_id, o.o_totalprice, c.c_name FROM checked o {JOIN} WHERE {SELECTIVE}"
    ),
    "derived_table": (
        "SELECT o.o_id AS id, o.o_comment, c.c_name, o.o_totalprice * 2 FROM "
        f"(SELECT * FROM orders WHERE expensive_check(o_comment)) o {JOIN} WHERE {SELECTIVE}"
    ),
    "derived_table_projects_the_column_away": (
        "SELECT o.o_id, o.o_totalprice, c.c_name FROM (SELECT o_id, o_custkey, o_totalprice FROM orders "
        f"WHERE expensive_check(o_comment)) o {JOIN} WHERE {SELECTIVE}"
    ),
    "join_on": (
        "SELECT o.o_id, o.o_totalprice, c.c_name FROM orders o JOIN customer c "
        f"ON o.o_custkey = c.c_custkey AND expensive_check(o.o_comment) WHERE {SELECTIVE}"
    ),
    "temp_view": f"SELECT o.o_id, o.o_totalprice, c.c_name FROM {VIEW} o {JOIN} WHERE {SELECTIVE}",
}
#: forms the engine does not pull up yet, with the reason
GAPS: dict[str, str] = {}
NO_PAY = (
    "WITH checked AS (SELECT * FROM orders WHERE expensive_check(o_comment)) "
    f"SELECT o.o_id, c.c_name FROM checked o {JOIN}"
)


@pytest.fixture(scope="module")
def world(spark):
    register(spark)
    udf = CountingUdf(spark)
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {VIEW} AS SELECT * FROM orders WHERE expensive_check(o_comment)")
    tables = catalog()
    # the runner sends the view's text as a CTE of the same name, which a catalog entry does not shadow
    tables["tables"][VIEW] = copy.deepcopy(tables["tables"]["orders"])
    return spark, udf, tables, spark.sql(JOINED).first()[0]


def rows(values: list[Any]) -> Counter:
    return Counter(tuple(round(v, 6) if isinstance(v, float) else v for v in row) for row in values)


def udf_placement(df: Any) -> tuple[list[bool], bool]:
    """For each Python UDF evaluation, whether a join is below it; and whether one sits below some join."""
    nodes = plans.walk(plans.executed(df))
    above = [bool(plans.JOINS & plans.below(n)) for n in nodes if plans.name(n) in plans.PYTHON_UDFS]
    under_a_join = any(plans.PYTHON_UDFS & plans.below(n) for n in nodes if plans.name(n) in plans.JOINS)
    return above, under_a_join


def run(spark: Any, sql: str, tables: dict[str, Any]) -> Any:
    return run_sql(spark, sql, client=PushdownClient(), catalog=tables, functions=FUNCTIONS, min_time_saved_s=0)


@pytest.mark.parametrize(
    "form", [pytest.param(f, marks=pytest.mark.xfail(reason=GAPS[f], strict=True)) if f in GAPS else f for f in FORMS]
)
def test_an_early_written_udf_runs_above_the_selective_join(world, form):
    spark, udf, tables, joined = world
    sql = FORMS[form]
    original = spark.sql(sql)
    assert udf_placement(original) == ([False], True), "control: as written, Catalyst evaluates it under the join"
    want, calls_written = udf.count(original.collect)

    result = run(spark, sql, tables)
    assert "expensive_check" in " ".join(result.answer["spark"]["barriers"]), result.answer["spark"]
    assert udf_placement(spark.sql(result.answer["spark"]["sql"])) == ([True], False)
    got, calls = udf.count(result.collect)
    assert 0 < calls == joined < calls_written
    assert result.dataframe.columns == original.columns
    assert result.dataframe.dtypes == original.dtypes
    assert rows(got) == rows(want)


def test_a_join_that_keeps_every_row_does_not_pay_and_runs_as_written(world):
    spark, udf, tables, _ = world
    result = run(spark, NO_PAY, tables)
    assert result.answer["spark"].get("as_written") is True
    steps = [s for e in result.answer["summary"] if "expensive_check" in e["predicate"] for s in e["steps"]]
    assert [(s["action"], s["reason"]) for s in steps] == [("pushed", "into_scan")]
    assert udf_placement(result.dataframe) == ([False], True)
    got, calls = udf.count(result.collect)
    want, calls_written = udf.count(spark.sql(NO_PAY).collect)
    assert calls == calls_written and rows(got) == rows(want)
