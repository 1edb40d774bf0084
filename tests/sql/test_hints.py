"""Spark hints survive the rewrite and sit where Spark reads them.

The plan carries no hints; ``plan_to_sql(..., source=sql)`` puts each join
hint into the SELECT whose FROM/JOIN list holds the relations it names. The
Spark test reads the executed plan: a MERGE hint on tables small enough to be
broadcast must still give a sort-merge join after the rewrite.
"""

from __future__ import annotations

from typing import Any

import pytest

from costmodel import optimize_wire
from service.sql import plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG


def _rewritten(sql: str, dialect: str = "spark") -> str:
    plan = optimize_wire(sql_to_plan(sql, CATALOG), CATALOG, {"mode": "always"})["plan"]
    return plan_to_sql(plan, dialect, source=sql)


def test_hint_naming_an_alias_is_kept_on_the_joining_select() -> None:
    text = _rewritten("SELECT /*+ BROADCAST(x) */ x.a, u.f FROM t x JOIN u ON x.a = u.a WHERE x.c > 1")
    first_line = text.splitlines()[0]
    assert first_line == "SELECT /*+ BROADCAST(x) */"
    assert ") AS x" in text  # the filtered input kept the alias the hint names


def test_hint_inside_a_derived_table_stays_there() -> None:
    text = _rewritten("SELECT d.a FROM (SELECT /*+ MERGE(t, u) */ t.a FROM t JOIN u ON t.a = u.a) d WHERE d.a > 1")
    assert text.splitlines()[0] == "SELECT"
    assert "/*+ MERGE(t, u) */" in text


def test_no_hint_without_the_source_nor_in_duckdb() -> None:
    sql = "SELECT /*+ BROADCAST(u) */ t.a FROM t JOIN u ON t.a = u.a"
    plan = sql_to_plan(sql, CATALOG)
    assert "/*+" not in plan_to_sql(plan, "spark")
    assert "/*+" not in _rewritten(sql, "duckdb")


@pytest.fixture(scope="module")
def spark() -> Any:
    from tests.spark_session import get_spark, java_available

    if not java_available():
        pytest.skip("no Java for local Spark")
    session = get_spark()
    session.createDataFrame([(1, "x", 10), (2, "y", 20)], "a int, b string, c int").createOrReplaceTempView("t")
    session.createDataFrame([(1, 100, "p"), (3, 300, "q")], "a int, c int, f string").createOrReplaceTempView("u")
    return session


def test_spark_executes_the_hinted_join(spark: Any) -> None:
    sql = "SELECT /*+ MERGE(x, u) */ x.a, u.f FROM t x JOIN u ON x.a = u.a WHERE x.c > 1 AND u.c < 500"
    text = _rewritten(sql)
    df = spark.sql(text)
    executed = df._jdf.queryExecution().executedPlan().toString()
    assert "SortMergeJoin" in executed, executed
    assert sorted(map(tuple, df.collect())) == sorted(map(tuple, spark.sql(sql).collect()))
