"""A CTE referenced several times stays one CTE in the rewritten SQL, and still means the same."""

from __future__ import annotations

from costmodel import optimize_wire
from service.sql import plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG, connect, rows, spark_to_duckdb

THREE_REFS = (
    "WITH g AS (SELECT a, sum(c) AS s, rank() OVER (ORDER BY sum(c)) AS r FROM t GROUP BY a) "
    "SELECT x.a, y.s, z.r FROM g x JOIN g y ON x.a = y.a JOIN g z ON y.a = z.a"
)


def test_three_references_render_one_definition() -> None:
    text = plan_to_sql(sql_to_plan(THREE_REFS, CATALOG), "spark")
    assert text.startswith("WITH _cte1 AS (")
    assert text.count("GROUP BY") == 1
    assert text.count("FROM _cte1 AS") + text.count("JOIN _cte1 AS") == 3


def test_a_copy_the_optimizer_changed_stays_apart_and_rows_agree() -> None:
    sql = THREE_REFS + " WHERE x.a > 1"
    answer = optimize_wire(sql_to_plan(sql, CATALOG), CATALOG, {"mode": "always"})
    text = plan_to_sql(answer["plan"], "duckdb")
    con = connect()
    assert rows(con, text) == rows(con, spark_to_duckdb(sql))


def test_correlated_derived_tables_are_not_hoisted() -> None:
    sql = (
        "SELECT t.a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a) AND EXISTS (SELECT 1 FROM u WHERE u.a = t.a)"
    )
    text = plan_to_sql(sql_to_plan(sql, CATALOG), "duckdb")
    assert "WITH" not in text
    con = connect()
    assert rows(con, text) == rows(con, spark_to_duckdb(sql))
