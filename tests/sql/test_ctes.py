"""A CTE referenced several times stays one CTE in the rewritten SQL, and still means the same."""

from __future__ import annotations

from typing import Any

import pytest

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


def test_the_renderers_derived_tables_hoist_as_the_walk_would() -> None:
    """``hoist_repeated`` given the derived tables the renderer made (inner ones first) names and orders the CTEs
    as it does when it walks the tree (outer ones first): two repeated bodies of one length, one pair inside
    another derived table, in either order."""
    from sqlglot import exp

    from service.sql.render_ctes import hoist_repeated
    from service.sql.render_nodes import Renderer

    bodies = {"p": "SELECT a, sum(b) AS s FROM t GROUP BY a", "q": "SELECT a, sum(c) AS s FROM t GROUP BY a"}
    for inner, outer in (("q", "p"), ("p", "q")):
        sql = (
            f"WITH p AS ({bodies['p']}), q AS ({bodies['q']}) SELECT d.a, x1.s, x2.s "
            f"FROM (SELECT y1.a, y2.s FROM {inner} y1 JOIN {inner} y2 ON y1.a = y2.a) d "
            f"JOIN {outer} x1 ON d.a = x1.a JOIN {outer} x2 ON x1.a = x2.a"
        )
        plan = sql_to_plan(sql, CATALOG)
        renderer = Renderer(plan, CATALOG)
        query = renderer.finish(renderer.node(plan, []))
        made = [str(sub.alias) for sub in renderer.derived_tables]
        assert made == ["y1", "y2", "d", "x1", "x2"]
        assert [str(sub.alias) for sub in query.find_all(exp.Subquery)] == ["d", "x1", "x2", "y1", "y2"]
        walked = hoist_repeated(query.copy())
        listed = hoist_repeated(query, renderer.derived_tables)
        assert listed.sql() == walked.sql()
        assert f"FROM {outer} AS" not in listed.sql() and "JOIN _cte1 AS x1" in listed.sql()
        assert plan_to_sql(plan, "spark") == walked.sql(dialect="spark", pretty=True)


def test_a_cte_referenced_twice_is_translated_once_and_reads_as_written_out_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each reference inlines the CTE's plan; the body is translated once and the plans are as if the query had
    written the body out at both references."""
    from sqlglot import exp

    from service.sql.plan_select import SelectBuilder

    body = "SELECT a, sum(c) AS s FROM t WHERE b > 'x' GROUP BY a"
    with_cte = f"WITH g AS ({body}) SELECT x.a, y.s FROM g x JOIN g y ON x.a = y.a"
    written_out = f"SELECT x.a, y.s FROM ({body}) x JOIN ({body}) y ON x.a = y.a"
    assert sql_to_plan(with_cte, CATALOG) == sql_to_plan(written_out, CATALOG)
    bodies: list[str] = []
    original = SelectBuilder.query

    def counted(self: SelectBuilder, q: exp.Expr, ctes: dict[str, exp.CTE]) -> Any:
        if isinstance(q, exp.Select) and q.args.get("group") is not None:
            bodies.append(q.sql())
        return original(self, q, ctes)

    monkeypatch.setattr(SelectBuilder, "query", counted)
    sql_to_plan(with_cte, CATALOG)
    assert len(bodies) == 1
    sql_to_plan(written_out, CATALOG)
    assert len(bodies) == 3  # two derived tables: two translations
