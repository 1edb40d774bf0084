"""Pulling up a predicate whose column the query projects away (``costmodel.carry``), executed on DuckDB.

Each query is written with an expensive predicate in a derived table that does not select the column it reads,
below a join the catalog says is selective. Original and rewritten run on the same rows: the same rows, column
names, order and types. Where the predicate rises, the decision log says which column was carried; where the
rules forbid it (a NULL-supplying side), nothing is carried; where it stays, the rewritten query selects no
column the original did not.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import duckdb
import pytest

from costmodel import optimize_wire
from service.sql.to_plan import sql_to_plan
from service.sql.to_sql import plan_to_sql
from tests.correctness.plangen import TABLES, make_rows

#: LIKE priced as an expensive UDF: worth moving above a join that keeps few rows
OPTIONS: dict[str, Any] = {"mode": "cost", "predicate_costs": {"like": 5000}}
EXPENSIVE = "s LIKE '%a%'"
#: t1 and t2 large facts (t2.a a key), t3 a dimension whose v = 1 keeps 1 row in 100
CATALOG: dict[str, Any] = {
    "tables": {
        "t1": {"row_count": 1_000_000, "column_stats": {"a": {"ndv": 1000}}},
        "t2": {"row_count": 1_000_000, "column_stats": {"a": {"ndv": 1_000_000}, "c": {"ndv": 1000}}},
        "t3": {"row_count": 1000, "column_stats": {"k": {"ndv": 1000}, "v": {"ndv": 100}}},
    }
}
for _name, _columns in TABLES.items():
    CATALOG["tables"][_name]["columns"] = [{"name": c, "type": t} for c, t in _columns]

#: name -> (query, the columns the rewrite carries up: None when the predicate must not rise)
CASES: dict[str, tuple[str, list[str] | None]] = {
    "projected_away": (
        f"SELECT count(*) AS n FROM (SELECT a, b FROM t1 WHERE {EXPENSIVE}) x JOIN t3 ON x.a = t3.k WHERE t3.v = 1",
        ["s"],
    ),
    "name_taken_above": (
        f"SELECT x.s, x.a FROM (SELECT a, b AS s FROM t1 WHERE t1.{EXPENSIVE}) x JOIN t3 ON x.a = t3.k WHERE t3.v = 1",
        ["s_2"],
    ),
    "alias_column_list": (
        f"SELECT x.p, t3.v FROM (SELECT a, b FROM t1 WHERE {EXPENSIVE}) AS x(p, q) JOIN t3 ON x.p = t3.k "
        "WHERE t3.v = 1",
        ["s"],
    ),
    "nested_projections": (
        f"SELECT y.a FROM (SELECT x.a FROM (SELECT a, b FROM t1 WHERE {EXPENSIVE}) x) y JOIN t3 ON y.a = t3.k "
        "WHERE t3.v = 1",
        ["s"],
    ),
    "computed_column_two_joins_grouped": (
        f"SELECT t3.v, count(*) AS n, sum(x.a2) AS total FROM (SELECT a * 2 AS a2, a FROM t1 WHERE {EXPENSIVE}) x "
        "JOIN t2 ON x.a = t2.a JOIN t3 ON t2.c = t3.k WHERE t3.v = 1 GROUP BY t3.v",
        ["s"],
    ),
    "two_columns_of_one_name": (
        f"SELECT count(*) AS n FROM (SELECT t1.a FROM t1 JOIN t2 ON t1.a = t2.a WHERE t1.{EXPENSIVE} "
        "AND t2.s LIKE '%b%') x JOIN t3 ON x.a = t3.k WHERE t3.v = 1",
        ["s", "s_2"],
    ),
    "distinct_above": (
        f"SELECT DISTINCT x.a FROM (SELECT a FROM t1 WHERE {EXPENSIVE}) x JOIN t3 ON x.a = t3.k WHERE t3.v = 1",
        ["s"],
    ),
    "left_join_preserved_side": (
        f"SELECT x.a, t3.v FROM (SELECT a FROM t1 WHERE {EXPENSIVE}) x JOIN t3 ON x.a = t3.k "
        f"LEFT JOIN t2 ON t2.a = x.a WHERE t3.v = 1",
        ["s"],
    ),
    "null_supplying_side": (
        f"SELECT t3.v, x.a FROM t3 LEFT JOIN (SELECT a FROM t1 WHERE {EXPENSIVE}) x ON x.a = t3.k WHERE t3.v = 1",
        None,
    ),
    "under_a_union": (
        f"SELECT u.a FROM (SELECT x.a FROM (SELECT a FROM t1 WHERE {EXPENSIVE}) x JOIN t3 ON x.a = t3.k "
        "WHERE t3.v = 1 UNION ALL SELECT k FROM t3) u",
        ["s"],
    ),
    "aggregate_between": (
        f"SELECT g.a, g.n FROM (SELECT a, count(*) AS n FROM (SELECT a FROM t1 WHERE {EXPENSIVE}) x GROUP BY a) g "
        "JOIN t3 ON g.a = t3.k WHERE t3.v = 1",
        None,
    ),
}
#: a join the catalog says keeps every row: pulling up does not pay, the derived table stays as written
NO_PAY = f"SELECT count(*) AS n FROM (SELECT a, b FROM t1 WHERE {EXPENSIVE}) x JOIN t3 ON x.a = t3.k"


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    rng = random.Random(42)
    con = duckdb.connect()
    for name, columns in TABLES.items():
        cols = ", ".join(f"{c} {'INTEGER' if t == 'int' else 'VARCHAR'}" for c, t in columns)
        con.execute(f"CREATE TABLE {name} ({cols})")
        rows = make_rows(rng, name, 60)
        con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' for _ in columns)})", rows)
    # the dimension's selective filter keeps some rows that join: v = 1 on a few keys the facts hold
    con.execute("UPDATE t3 SET v = 1 WHERE k IN (SELECT a FROM t1 LIMIT 5)")
    return con


def outcome(con: duckdb.DuckDBPyConnection, plan: dict[str, Any]) -> tuple[Counter, list[tuple[str, str]]]:
    cursor = con.execute(plan_to_sql(plan, "duckdb", catalog=CATALOG))
    rows = Counter(cursor.fetchall())
    return rows, [(d[0], str(d[1])) for d in cursor.description]


def carried(answer: dict[str, Any]) -> list[str]:
    return sorted({c for d in answer["decisions"] for c in d.get("carried_columns", [])})


@pytest.mark.parametrize("case", list(CASES))
def test_a_carried_column_leaves_rows_names_and_types_unchanged(con, case):
    sql, expect_carried = CASES[case]
    plan = sql_to_plan(sql, CATALOG)
    answer = optimize_wire(plan, CATALOG, OPTIONS)
    want, rows = outcome(con, plan)
    assert sum(want.values()) > 0, "the data lets rows through the selective join"
    assert outcome(con, answer["plan"]) == (want, rows), answer["explain"]["after"]
    rose = [d for d in answer["decisions"] if d.get("action") == "pulled_up"]
    if expect_carried is None:
        assert not rose and carried(answer) == [], answer["explain"]["after"]
    else:
        assert rose and carried(answer) == expect_carried, answer["explain"]["after"]


def test_a_predicate_that_stays_carries_nothing(con):
    plan = sql_to_plan(NO_PAY, CATALOG)
    answer = optimize_wire(plan, CATALOG, OPTIONS)
    assert not [d for d in answer["decisions"] if d.get("action") == "pulled_up"]
    assert outcome(con, answer["plan"]) == outcome(con, plan)
    assert projected(answer["plan"]) == projected(plan) == [["a", "b"]]


def projected(plan: dict[str, Any]) -> list[list[str]]:
    """The names each projection of a wire plan selects, top down."""
    out: list[list[str]] = []
    stack = [plan]
    while stack:
        node = stack.pop()
        if node.get("op") == "project" and node is not plan:
            out.append([e.get("as") for e in node["exprs"]])
        stack.extend(v for v in node.values() if isinstance(v, dict) and "op" in v)
        stack.extend(x for v in node.values() if isinstance(v, list) for x in v if isinstance(x, dict) and "op" in x)
    return out


def test_the_carried_column_is_priced(con):
    """The filter raised above the join pays for the rows the join received with the carried column
    (``carried_column`` per row); priced above what the raise saves, the predicate stays and nothing is carried."""
    plan = sql_to_plan(CASES["projected_away"][0], CATALOG)
    cheap = optimize_wire(plan, CATALOG, {**OPTIONS, "operator_costs": {"carried_column": 0}})
    priced = optimize_wire(plan, CATALOG, OPTIONS)
    assert carried(cheap) == carried(priced) == ["s"]
    # the rows the derived table passes the join, each with the carried column
    rows_carried = next(n["rows_out"] for n in priced["cost"]["after"]["nodes"] if n["operator"] == "alias")
    assert priced["cost"]["after"]["total"] == pytest.approx(cheap["cost"]["after"]["total"] + rows_carried)
    dear = optimize_wire(plan, CATALOG, {**OPTIONS, "operator_costs": {"carried_column": 1e6}})
    assert carried(dear) == [] and projected(dear["plan"]) == projected(plan)
