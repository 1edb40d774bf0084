"""A CTE referenced several times stays one CTE in the rewritten SQL, and still means the same."""

from __future__ import annotations

import json
from pathlib import Path

import sqlglot
from sqlglot import exp

from costmodel import optimize_wire
from service.sql import plan_to_sql, sql_to_plan
from service.sql.render_ctes import found
from tests.sql.helpers import CATALOG, connect, rows, spark_to_duckdb

ROOT = Path(__file__).resolve().parents[2]

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


def test_the_search_for_repeats_meets_nodes_in_find_alls_order() -> None:
    """``found`` (a plain loop) lists what sqlglot's ``find_all`` yields, the same objects in the same order: the
    first of a repeated body is the one defined, and repeats are named in the order met."""
    catalog = json.loads((ROOT / "bench" / "tpch" / "catalog.json").read_text())
    trees = [
        sqlglot.parse_one(p.read_text(), read="spark") for p in sorted(ROOT.glob("tests/sql/corpus/queries/*.sql"))
    ]
    for path in sorted((ROOT / "bench" / "tpch" / "queries").glob("q*.sql")):
        sql = path.read_text()
        trees.append(sqlglot.parse_one(sql, read="spark"))
        rendered = plan_to_sql(optimize_wire(sql_to_plan(sql, catalog), catalog)["plan"], "spark")
        trees.append(sqlglot.parse_one(rendered, read="spark"))
    trees.append(sqlglot.parse_one(THREE_REFS, read="spark"))
    kinds_tried = [(exp.Subquery,), (exp.Table,), (exp.Table, exp.Subquery), (exp.Column,), (exp.Select, exp.Join)]
    met = 0
    for tree in trees:
        for kinds in kinds_tried:
            ours, theirs = found(tree, kinds), list(tree.find_all(*kinds))
            assert len(ours) == len(theirs) and all(a is b for a, b in zip(ours, theirs, strict=True))
            met += len(ours)
    assert met > 2000  # TPC-H as written and as rewritten, and the corpus (windows, grouping sets, set operations)
