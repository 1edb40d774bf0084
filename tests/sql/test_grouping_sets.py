"""ROLLUP, CUBE and GROUPING SETS: the plan's grouping sets, their legality and their rendering.

A predicate above a grouping-sets aggregate may go below it only when it reads
keys that every set groups by; one on a key some sets leave NULL, on the
grouping id or on an aggregate stays above (DuckDB and Spark's Expand agree).
"""

from __future__ import annotations

from typing import Any

import pytest

from costmodel import optimize_wire
from service.sql import SqlError, plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG, connect, rows, spark_to_duckdb


def _aggregate(plan: Any) -> dict[str, Any]:
    stack = [plan]
    while stack:
        node = stack.pop()
        if node.get("op") == "aggregate":
            return node
        stack.extend(node[k] for k in ("input", "left", "right") if k in node)
        stack.extend(node.get("inputs", []))
    raise AssertionError("no aggregate")


@pytest.mark.parametrize(
    ("group_by", "keys", "sets"),
    [
        ("ROLLUP (a, b)", ["t.a", "t.b"], [[0, 1], [0], []]),
        ("CUBE (a, b)", ["t.a", "t.b"], [[0, 1], [0], [1], []]),
        ("GROUPING SETS ((a, b), (b), ())", ["t.a", "t.b"], [[0, 1], [1], []]),
        ("c, ROLLUP (a)", ["t.c", "t.a"], [[0, 1], [0]]),
        # Composite elements group their keys together (were refused as "expression TUPLE").
        ("ROLLUP ((a, b), c)", ["t.a", "t.b", "t.c"], [[0, 1, 2], [0, 1], []]),
        ("CUBE ((a, b), c)", ["t.a", "t.b", "t.c"], [[0, 1, 2], [0, 1], [2], []]),
        ("GROUPING SETS ((a, b), c, ())", ["t.a", "t.b", "t.c"], [[0, 1], [2], []]),
    ],
)
def test_grouping_sets_in_the_plan(group_by: str, keys: list[str], sets: list[list[int]]) -> None:
    agg = _aggregate(sql_to_plan(f"SELECT count(*) AS n FROM t GROUP BY {group_by}", CATALOG))
    assert [k["col"] for k in agg["group_by"]] == keys
    assert agg["grouping_sets"] == sets


def test_grouping_id_without_arguments_lists_every_key() -> None:
    agg = _aggregate(sql_to_plan("SELECT a, b, grouping_id() AS g FROM t GROUP BY ROLLUP (a, b)", CATALOG))
    assert agg["aggregates"][0]["expr"] == {"fn": "grouping_id", "args": [{"col": "t.a"}, {"col": "t.b"}]}


def test_grouping_without_grouping_sets_is_an_error() -> None:
    with pytest.raises(SqlError) as err:
        sql_to_plan("SELECT a, GROUPING(a) AS g FROM t GROUP BY a", CATALOG)
    assert err.value.code == "invalid_query"


def _decisions(sql: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    plan = sql_to_plan(sql, CATALOG)
    answer = optimize_wire(plan, CATALOG, {"mode": "always"})
    agg_id = _aggregate(plan)["id"]
    return answer, [d for d in answer["decisions"] if d["operator"] == agg_id]


@pytest.mark.parametrize(
    ("where", "crosses"),
    [
        ("g.a > 1", True),  # a is in every set
        ("g.b = 'x'", False),  # b is NULL in the (a) set
        ("g.gid = 0", False),  # the grouping id
        ("g.n > 1", False),  # an aggregate
    ],
)
def test_only_keys_of_every_set_cross(where: str, crosses: bool) -> None:
    sql = (
        "SELECT * FROM (SELECT a, b, count(*) AS n, grouping_id() AS gid FROM t "
        f"GROUP BY GROUPING SETS ((a, b), (a))) g WHERE {where}"
    )
    answer, decisions = _decisions(sql)
    assert decisions, "the aggregate got a decision"
    assert any(d["action"] == "pushed" for d in decisions) == crosses
    con = connect()
    assert rows(con, plan_to_sql(answer["plan"], "duckdb")) == rows(con, spark_to_duckdb(sql))


def test_nothing_crosses_a_rollup_with_a_grand_total() -> None:
    _, decisions = _decisions("SELECT * FROM (SELECT a, count(*) AS n FROM t GROUP BY ROLLUP (a)) g WHERE g.a > 1")
    assert decisions and all(d["action"] != "pushed" for d in decisions)


@pytest.mark.parametrize("dialect", ["spark", "duckdb"])
def test_rendered_as_grouping_sets(dialect: str) -> None:
    plan = sql_to_plan("SELECT a, b, sum(c) AS s FROM t GROUP BY CUBE (a, b)", CATALOG)
    text = plan_to_sql(plan, dialect)
    assert "GROUPING SETS" in text
    assert sql_to_plan(text, CATALOG, dialect) == plan


def _aggregate_rows(group_by: str) -> float:
    plan = sql_to_plan(f"SELECT count(*) AS n FROM t GROUP BY {group_by}", CATALOG)
    answer = optimize_wire(plan, CATALOG, {"mode": "never"})
    (row,) = [r for r in answer["cost"]["before"]["nodes"] if r["operator"] == "aggregate"]
    return row["rows_out"]


def test_every_grouping_set_adds_its_groups_to_the_estimate() -> None:
    # t has 7 rows: a rollup adds the grand total row to the groups of a
    assert _aggregate_rows("ROLLUP (a)") == _aggregate_rows("a") + 1
    assert _aggregate_rows("CUBE (a, b)") > _aggregate_rows("a, b")
