"""A subquery in an inner join's condition is rendered as a WHERE over that join.

Found by TPC-H Q2 on Spark: the engine moves ``ps_supplycost = (SELECT min(...) WHERE
p_partkey = ps_partkey)`` into the join condition (legal for an inner join), and Spark
refuses correlated scalar subqueries anywhere but filters, aggregates and projections
(UNSUPPORTED_CORRELATED_SCALAR_SUBQUERY). ``A JOIN B ON c AND s`` equals ``A JOIN B ON c
WHERE s``; the renderer wraps a block with a WHERE before any further join, so ``s``
still filters exactly that join's rows, also under an outer join above it.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from service.sql import plan_to_sql, sql_to_plan
from tests.spark_session import get_spark, java_available
from tests.sql.helpers import CATALOG, ROWS, connect, rows

SUBQUERY = "(SELECT min(v.k) FROM v WHERE v.k > t.c)"
CASES = {
    "alone": (
        f"SELECT t.a, u.c FROM t JOIN u ON t.a = u.a AND u.c > {SUBQUERY}",
        f"SELECT t.a, u.c FROM t JOIN u ON t.a = u.a WHERE u.c > {SUBQUERY}",
    ),
    "only conjunct": (
        f"SELECT t.a, u.c FROM t JOIN u ON u.c > {SUBQUERY}",
        f"SELECT t.a, u.c FROM t CROSS JOIN u WHERE u.c > {SUBQUERY}",
    ),
    "under a right join": (
        f"SELECT t.a, u.c, w.w FROM t JOIN u ON t.a = u.a AND u.c > {SUBQUERY} RIGHT JOIN v AS w ON w.k = u.c",
        f"SELECT j.a, j.c, w.w FROM (SELECT t.a, u.c FROM t JOIN u ON t.a = u.a WHERE u.c > {SUBQUERY}) AS j "
        "RIGHT JOIN v AS w ON w.k = j.c",
    ),
    # SQL cannot say this one without a derived table, so _plan builds it: v LEFT JOIN (t JOIN u ...).
    "as the right input of a left join": (
        "v LEFT JOIN alone",
        f"SELECT w.k, j.a, j.c FROM v AS w LEFT JOIN (SELECT t.a, u.c FROM t JOIN u ON t.a = u.a "
        f"WHERE u.c > {SUBQUERY}) AS j ON w.k = j.c",
    ),
}


def _plan(sql: str) -> dict[str, Any]:
    if sql == "v LEFT JOIN alone":
        inner = _inner_join(sql_to_plan(CASES["alone"][0], CATALOG, "spark"))
        on = {"fn": "=", "args": [{"col": "w.k"}, {"col": "u.c"}]}
        outer = {
            "op": "join",
            "type": "left",
            "on": on,
            "left": {"op": "scan", "table": "v", "alias": "w"},
            "right": inner,
        }
        names = ("w.k", "t.a", "u.c")
        return {"op": "project", "exprs": [{"expr": {"col": n}, "as": n[2:]} for n in names], "input": outer}
    plan = sql_to_plan(sql, CATALOG, "spark")
    assert "subquery" in str(_inner_join(plan)["on"]), "the fixture must keep the subquery in the ON"
    return plan


def _subqueries_in_on(text: str, dialect: str) -> list[exp.Expression]:
    joins = sqlglot.parse_one(text, read=dialect).find_all(exp.Join)
    return [j for j in joins if j.args.get("on") is not None and j.args["on"].find(exp.Select)]


def _inner_join(node: dict[str, Any]) -> dict[str, Any]:
    if node.get("op") == "join" and node.get("type") == "inner":
        return node
    for key in ("input", "left", "right"):
        if isinstance(node.get(key), dict):
            found = _inner_join(node[key])
            if found:
                return found
    return {}


@pytest.mark.parametrize(("sql", "reference"), CASES.values(), ids=CASES.keys())
def test_subquery_conjunct_leaves_the_on_clause(sql: str, reference: str) -> None:
    plan = _plan(sql)
    con = connect()
    for dialect in ("spark", "duckdb"):
        text = plan_to_sql(plan, dialect, catalog=CATALOG)
        assert not _subqueries_in_on(text, dialect), text
    assert rows(con, plan_to_sql(plan, "duckdb", catalog=CATALOG)) == rows(con, reference)
    con.close()


def test_outer_join_conditions_keep_their_subquery() -> None:
    """Only an inner join's condition may become a WHERE: a LEFT JOIN's ON keeps every left row."""
    plan = sql_to_plan(f"SELECT t.a, u.c FROM t LEFT JOIN u ON t.a = u.a AND u.c > {SUBQUERY}", CATALOG, "spark")
    text = plan_to_sql(plan, "duckdb", catalog=CATALOG)
    assert _subqueries_in_on(text, "duckdb"), text
    con = connect()
    assert rows(con, text) == rows(con, f"SELECT t.a, u.c FROM t LEFT JOIN u ON t.a = u.a AND u.c > {SUBQUERY}")
    con.close()


def _sql_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    return "'" + value.replace("'", "''") + "'" if isinstance(value, str) else repr(value)


@pytest.fixture(scope="module")
def spark() -> Any:
    """The run's shared session with t, u and v as views over VALUES (no Python workers needed)."""
    if not java_available():
        pytest.skip("no Java runtime: local Spark cannot start")
    session = get_spark()
    for name in ("t", "u", "v"):
        cols = ", ".join(c["name"] for c in CATALOG["tables"][name]["columns"])
        values = ", ".join("(" + ", ".join(map(_sql_literal, row)) + ")" for row in ROWS[name])
        session.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS SELECT * FROM VALUES {values} AS {name}({cols})")
    return session


@pytest.mark.slow
@pytest.mark.parametrize(("sql", "reference"), CASES.values(), ids=CASES.keys())
def test_spark_runs_the_rendering(spark: Any, sql: str, reference: str) -> None:
    con = connect()
    expected = rows(con, reference)
    con.close()
    got = [tuple(r) for r in spark.sql(plan_to_sql(_plan(sql), "spark", catalog=CATALOG)).collect()]
    assert sorted(got, key=str) == sorted(expected, key=str)
