"""LATERAL VIEW explode (and DuckDB's JOIN UNNEST) as a ``generate`` node: a barrier filters never cross.

The plan keeps the generator where the query wrote it; every filter above it
stays above it (reason ``generator``), the rewritten SQL puts it back as
``LATERAL VIEW`` for Spark and ``[LEFT] JOIN UNNEST`` for DuckDB, and Spark's
executed plan still has its Generate with the filter on its output above it.
"""

from __future__ import annotations

from typing import Any

import pytest

from costmodel import optimize_wire
from service.sql import SqlError, plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG, connect, rows

SQL = (
    "SELECT t.a, u.f, x FROM t JOIN u ON t.a = u.a "
    "LATERAL VIEW explode(array(t.a, t.c)) e AS x WHERE u.f = 'p' AND x > 15 AND t.a > 0"
)
OUTER = "SELECT t.a, x FROM t LATERAL VIEW OUTER explode(array(t.c)) e AS x WHERE t.a > 1"


def _ops(plan: dict[str, Any]) -> list[str]:
    out, node = [], plan
    while isinstance(node, dict):
        out.append(node["op"])
        node = node.get("input") or node.get("left")
    return out


@pytest.mark.parametrize("mode", ["always", "cost"])
def test_filters_stay_above_the_generator(mode: str) -> None:
    answer = optimize_wire(sql_to_plan(SQL, CATALOG), CATALOG, {"mode": mode})
    assert _ops(answer["plan"])[:3] == ["project", "filter", "generate"]
    reasons = {d["predicate"]: d["reason"] for d in answer["decisions"]}
    assert reasons == {"u.f = 'p'": "generator", "x > 15": "generator", "t.a > 0": "generator"} or all(
        r == "generator" for r in reasons.values()
    )


def test_rendered_back_as_written() -> None:
    plan = optimize_wire(sql_to_plan(SQL, CATALOG), CATALOG, {"mode": "always"})["plan"]
    spark = plan_to_sql(plan, "spark")
    assert "LATERAL VIEW\nEXPLODE(ARRAY(t.a, t.c)) e AS x" in spark
    assert "CROSS JOIN UNNEST([t.a, t.c]) AS e(x)" in plan_to_sql(plan, "duckdb")
    outer = plan_to_sql(sql_to_plan(OUTER, CATALOG), "duckdb")
    assert "LEFT JOIN UNNEST([t.c]) AS e(x)\n  ON TRUE" in outer
    assert "LATERAL VIEW OUTER" in plan_to_sql(sql_to_plan(OUTER, CATALOG), "spark")


def test_duckdb_unnest_reads_back_as_the_same_plan() -> None:
    duck = "SELECT t.a, e.x FROM t CROSS JOIN UNNEST([t.a, t.c]) AS e(x) WHERE e.x > 15"
    spark = "SELECT t.a, e.x FROM t LATERAL VIEW explode(array(t.a, t.c)) e AS x WHERE e.x > 15"
    assert sql_to_plan(duck, CATALOG, "duckdb") == sql_to_plan(spark, CATALOG, "spark")


@pytest.mark.parametrize("sql", [SQL, OUTER])
def test_duckdb_rows_unchanged(sql: str) -> None:
    con = connect()
    original = plan_to_sql(sql_to_plan(sql, CATALOG), "duckdb")
    for mode in ("always", "cost"):
        answer = optimize_wire(sql_to_plan(sql, CATALOG), CATALOG, {"mode": mode})
        assert rows(con, plan_to_sql(answer["plan"], "duckdb")) == rows(con, original)


@pytest.mark.parametrize(
    ("sql", "construct"),
    [
        ("SELECT t.a, p, x FROM t LATERAL VIEW posexplode(array(t.c)) e AS p, x", "LATERAL VIEW POSEXPLODE"),
        ("SELECT t.a FROM t LATERAL VIEW explode(array(t.c)) e", "LATERAL VIEW without an alias and column names"),
    ],
)
def test_other_generators_are_refused_by_name(sql: str, construct: str) -> None:
    with pytest.raises(SqlError) as err:
        sql_to_plan(sql, CATALOG)
    assert err.value.code == "unsupported" and err.value.detail["construct"] == construct


@pytest.fixture(scope="module")
def spark() -> Any:
    from tests.spark_session import get_spark, java_available

    if not java_available():
        pytest.skip("no Java for local Spark")
    session = get_spark()
    t = [(1, "x", 20), (2, "y", None), (3, None, 5), (16, "z", 40)]
    session.createDataFrame(t, "a int, b string, c int").createOrReplaceTempView("t")
    u = [(1, 100, "p"), (2, None, "p"), (16, 5, "p"), (3, 300, "q")]
    session.createDataFrame(u, "a int, c int, f string").createOrReplaceTempView("u")
    return session


def test_spark_executes_the_generator_with_the_filter_above_it(spark: Any) -> None:
    answer = optimize_wire(sql_to_plan(SQL, CATALOG), CATALOG, {"mode": "always"})
    df = spark.sql(plan_to_sql(answer["plan"], "spark"))
    executed = df._jdf.queryExecution().executedPlan().toString()
    assert "Generate explode" in executed, executed
    assert sorted(map(tuple, df.collect())) == sorted(map(tuple, spark.sql(SQL).collect()))
    assert df.columns == spark.sql(SQL).columns


def test_generate_round_trips_through_the_wire() -> None:
    plan = sql_to_plan(OUTER, CATALOG)
    answer = optimize_wire(plan, CATALOG, {"mode": "never"})
    node = answer["plan"]
    while node["op"] != "generate":
        node = node["input"]
    assert {k: node[k] for k in ("generator", "outer", "alias", "columns")} == {
        "generator": {"fn": "explode", "args": [{"fn": "array", "args": [{"col": "t.c"}]}]},
        "outer": True,
        "alias": "e",
        "columns": ["x"],
    }
