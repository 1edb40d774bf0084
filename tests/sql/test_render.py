"""plan_to_sql on plans an optimizer would produce (filters moved down).

Each case is a hand-written plan next to reference SQL that means the same;
the rendered SQL must return the reference's rows on DuckDB, and where the
point is the filter's position the rendered text must show it there.
"""

from __future__ import annotations

from typing import Any

import pytest

from service.sql import plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG, connect, rows


def col(name: str) -> dict[str, Any]:
    return {"col": name}


def lit(value: Any, typ: str = "int") -> dict[str, Any]:
    return {"lit": value, "type": typ}


def fn(op: str, *args: Any) -> dict[str, Any]:
    return {"fn": op, "args": list(args)}


def scan(table: str, alias: str | None = None, filters: list[Any] | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"op": "scan", "table": table, "filters": filters or []}
    if alias:
        node["alias"] = alias
    return node


def project(input_: dict[str, Any], *names: str) -> dict[str, Any]:
    return {"op": "project", "exprs": [{"expr": col(n), "as": n.split(".")[-1]} for n in names], "input": input_}


def filt(input_: dict[str, Any], pred: dict[str, Any]) -> dict[str, Any]:
    return {"op": "filter", "predicate": pred, "input": input_}


def join(kind: str, left: dict[str, Any], right: dict[str, Any], on: dict[str, Any] | None) -> dict[str, Any]:
    return {"op": "join", "type": kind, "on": on, "left": left, "right": right}


# (name, plan, reference SQL with the same meaning, text the rendering must contain)
CASES: list[tuple[str, dict[str, Any], str, str | None]] = [
    (
        "filter below join",
        project(
            join("inner", filt(scan("t"), fn(">", col("t.c"), lit(15))), scan("u"), fn("=", col("t.a"), col("u.a"))),
            "t.a",
            "u.f",
        ),
        "SELECT t.a, u.f FROM t JOIN u ON t.a = u.a WHERE t.c > 15",
        "FROM (\n  SELECT\n    *\n  FROM t\n  WHERE\n    t.c > 15\n) AS t\nJOIN u",
    ),
    (
        "scan filters",
        project(scan("t", "x", [fn("=", col("x.b"), lit("x", "string"))]), "x.a"),
        "SELECT a FROM t WHERE b = 'x'",
        "FROM t AS x\nWHERE",
    ),
    (
        "filter below left join, null-supplying side",
        project(
            join("left", scan("t"), filt(scan("u"), fn(">", col("u.c"), lit(150))), fn("=", col("t.a"), col("u.a"))),
            "t.a",
            "u.c",
        ),
        "SELECT t.a, u.c FROM t LEFT JOIN (SELECT * FROM u WHERE c > 150) u ON t.a = u.a",
        None,
    ),
    (
        "filter between two joins, same column names",
        project(
            join(
                "inner",
                filt(
                    join("inner", scan("t"), scan("u"), fn("=", col("t.a"), col("u.a"))),
                    fn("or", fn("is_null", col("t.c")), fn("<", col("t.c"), col("u.c"))),
                ),
                scan("v"),
                fn("=", col("v.k"), col("t.c")),
            ),
            "t.a",
            "u.a",
            "u.c",
            "v.w",
        ),
        "SELECT t.a, u.a, u.c, v.w FROM t JOIN u ON t.a = u.a JOIN v ON v.k = t.c WHERE t.c IS NULL OR t.c < u.c",
        None,
    ),
    (
        "null-aware anti join is NOT IN",
        project(
            {
                "op": "join",
                "type": "anti",
                "null_aware": True,
                "on": fn("=", col("t.a"), col("u.a")),
                "left": scan("t"),
                "right": scan("u"),
            },
            "t.a",
            "t.b",
        ),
        "SELECT a, b FROM t WHERE a NOT IN (SELECT a FROM u)",
        None,
    ),
    (
        "semi join with filtered right side",
        project(
            join("semi", scan("t"), filt(scan("u"), fn(">", col("u.c"), lit(150))), fn("=", col("t.a"), col("u.a"))),
            "t.a",
        ),
        "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a AND u.c > 150)",
        None,
    ),
    (
        "filter pushed into union branches",
        {
            "op": "union",
            "all": True,
            "inputs": [
                project(filt(scan("t"), fn(">", col("t.a"), lit(1))), "t.a"),
                project(filt(scan("u"), fn(">", col("u.a"), lit(1))), "u.a"),
            ],
        },
        "SELECT a FROM t WHERE a > 1 UNION ALL SELECT a FROM u WHERE a > 1",
        None,
    ),
    (
        "filter above a window on its partition key",
        project(
            filt(
                {
                    "op": "window",
                    "partition_by": [col("t.b")],
                    "order_by": [],
                    "functions": [{"expr": fn("count"), "as": "n"}],
                    "input": scan("t"),
                },
                fn("=", col("t.b"), lit("x", "string")),
            ),
            "t.a",
            "n",
        ),
        "SELECT a, n FROM (SELECT a, b, count(*) OVER (PARTITION BY b) AS n FROM t) WHERE b = 'x'",
        None,
    ),
    (
        "aggregate over filtered alias with column names",
        {
            "op": "aggregate",
            "group_by": [col("s.k")],
            "aggregates": [{"expr": {"fn": "count", "args": [col("s.v")], "distinct": True}, "as": "n"}],
            "input": {
                "op": "alias",
                "name": "s",
                "columns": ["k", "v"],
                "input": project(filt(scan("t"), fn("is_not_null", col("t.c"))), "t.b", "t.c"),
            },
        },
        "SELECT b AS k, count(DISTINCT c) AS n FROM t WHERE c IS NOT NULL GROUP BY b",
        None,
    ),
    (
        "sort and limit without project, then filter",
        filt(
            {
                "op": "limit",
                "count": 3,
                "offset": 1,
                "input": {
                    "op": "sort",
                    "keys": [
                        {"expr": col("v.k"), "desc": True, "nulls_first": False},
                        {"expr": col("v.w"), "desc": False, "nulls_first": True},
                    ],
                    "input": scan("v"),
                },
            },
            fn("is_not_null", col("v.w")),
        ),
        "SELECT * FROM (SELECT * FROM v ORDER BY k DESC NULLS LAST, w NULLS FIRST LIMIT 3 OFFSET 1) "
        "WHERE w IS NOT NULL",
        None,
    ),
    (
        "distinct below join",
        project(
            join(
                "inner",
                {"op": "alias", "name": "d", "input": {"op": "distinct", "input": project(scan("u"), "u.a")}},
                scan("t"),
                fn("=", col("d.a"), col("t.a")),
            ),
            "t.a",
            "t.c",
        ),
        "SELECT t.a, t.c FROM (SELECT DISTINCT a FROM u) d JOIN t ON d.a = t.a",
        None,
    ),
    (
        "intersect and except",
        {
            "op": "except",
            "all": False,
            "inputs": [
                {"op": "intersect", "all": True, "inputs": [project(scan("t"), "t.a"), project(scan("u"), "u.a")]},
                project(scan("v"), "v.k"),
            ],
        },
        "(SELECT a FROM t INTERSECT ALL SELECT a FROM u) EXCEPT SELECT k FROM v",
        None,
    ),
]


@pytest.fixture(scope="module")
def con() -> Any:
    connection = connect()
    yield connection
    connection.close()


@pytest.mark.parametrize(("name", "plan", "reference", "shows"), CASES, ids=[c[0] for c in CASES])
def test_rendered_plan_matches_reference(
    con: Any, name: str, plan: dict[str, Any], reference: str, shows: str | None
) -> None:
    sql = plan_to_sql(plan, "duckdb", catalog=CATALOG)
    assert rows(con, sql) == rows(con, reference), sql
    if shows is not None:
        assert shows in sql, sql
    # Without a catalog the scans' columns are inferred from the plan's references.
    assert rows(con, plan_to_sql(plan, "duckdb")) == rows(con, reference)
    # The Spark text reads back (as Spark SQL) into a plan with the same rows.
    again = sql_to_plan(plan_to_sql(plan, "spark", catalog=CATALOG), CATALOG, "spark")
    assert rows(con, plan_to_sql(again, "duckdb")) == rows(con, reference)


def test_star_output_of_a_wrapped_join_needs_the_catalog() -> None:
    plan = filt(
        join("inner", filt(scan("t"), fn(">", col("t.a"), lit(1))), scan("u"), fn("=", col("t.a"), col("u.a"))),
        fn(">", col("u.c"), lit(0)),
    )
    con = connect()
    got = rows(con, plan_to_sql(plan, "duckdb", catalog=CATALOG))
    assert got == rows(con, "SELECT * FROM t JOIN u ON t.a = u.a WHERE t.a > 1 AND u.c > 0")


def test_spark_text_is_spark() -> None:
    plan = sql_to_plan("SELECT b, count(*) AS n FROM t WHERE d < date '2020-06-01' GROUP BY b ORDER BY n", CATALOG)
    text = plan_to_sql(plan, "spark")
    assert "CAST('2020-06-01' AS DATE)" in text
    assert "ORDER BY\n  n" in text
