"""SQL -> plan -> SQL round trips, executed on DuckDB.

Each fixture is the input SQL (Spark dialect) next to the operators the naive
plan must contain, in pre-order. The test checks that shape, then runs the
original SQL and the regenerated SQL on the same small tables (NULLs and
duplicates included) and compares the rows as multisets. A second trip
(plan -> Spark SQL -> plan -> DuckDB SQL) proves the Spark text reads back
to the same meaning.
"""

from __future__ import annotations

from typing import Any

import pytest

from service.sql import plan_to_sql, sql_to_plan
from tests.sql.helpers import CATALOG, connect, rows, spark_to_duckdb

# (name, Spark SQL, operators the plan must show in pre-order)
CASES: list[tuple[str, str, list[str]]] = [
    # --- scans, filters, expressions
    ("where", "SELECT a, b FROM t WHERE c > 10 AND b = 'x'", ["project", "filter", "scan"]),
    ("star", "SELECT * FROM t WHERE a IS NOT NULL", ["project", "filter", "scan"]),
    ("qualified star", "SELECT t.*, u.f FROM t JOIN u ON t.a = u.a", ["project", "join", "scan", "scan"]),
    ("or not null", "SELECT a FROM t WHERE NOT (a = 1 OR c IS NULL) OR b IS NULL", ["project", "filter"]),
    (
        "arith",
        "SELECT a + c * 2 AS x, (a + c) * 2 AS y, c - a - 1 AS z, c % 3 AS m, -a AS n, c / 4 AS q, "
        "c - (a - 1) AS z2, c / (a * 2) AS q2 FROM t",
        ["project"],
    ),
    (
        "case",
        "SELECT CASE WHEN c > 15 THEN 'big' WHEN c IS NULL THEN 'none' ELSE 'small' END AS s, "
        "CASE b WHEN 'x' THEN 1 WHEN 'y' THEN 2 END AS n FROM t",
        ["project"],
    ),
    (
        "functions",
        "SELECT coalesce(t.c, 0) AS c0, upper(b) AS ub, substring(b, 1, 1) AS s1, lower(f) AS lf, "
        "abs(u.c - 25) AS ab, round(e, 1) AS r, length(b) AS l FROM t JOIN u ON t.a = u.a",
        ["project", "join"],
    ),
    ("like in between", "SELECT a FROM t WHERE b LIKE 'x%' OR c IN (20, 30) OR e BETWEEN 0 AND 2", ["filter"]),
    ("not in list", "SELECT a FROM t WHERE c NOT IN (10, 40)", ["filter"]),
    (
        "negated forms",
        "SELECT a FROM t WHERE b NOT LIKE 'x%' AND c NOT BETWEEN 15 AND 35 AND b IS NOT NULL",
        ["filter"],
    ),
    ("cast", "SELECT CAST(c AS string) AS s, CAST(e AS int) AS i, CAST(a AS decimal(10, 2)) AS d FROM t", ["project"]),
    ("dates", "SELECT a FROM t WHERE d >= date '2020-01-01' AND d < date '2020-01-01' + interval '1' year", ["filter"]),
    ("date minus days", "SELECT a FROM t WHERE d <= date '2020-03-31' - interval '45' day", ["filter"]),
    ("date plus months", "SELECT a FROM t WHERE d < date '2020-01-31' + interval '1' month", ["filter"]),
    ("extract year", "SELECT extract(year FROM d) AS y, year(d) AS y2, month(d) AS m FROM t", ["project"]),
    ("concat", "SELECT b || '-' || f AS bf, concat(b, f) AS c2 FROM t JOIN u ON t.a = u.a", ["project"]),
    ("rlike if", "SELECT a FROM t WHERE b RLIKE '^[xy]$' AND if(c > 15, true, false)", ["filter"]),
    # --- joins
    ("inner join", "SELECT t.a, u.f FROM t JOIN u ON t.a = u.a AND u.c > 50", ["project", "join"]),
    ("left join", "SELECT t.a, u.f FROM t LEFT JOIN u ON t.a = u.a WHERE u.f IS NULL OR t.c > 5", ["filter", "join"]),
    ("right join", "SELECT t.a, u.a AS ua, u.f FROM t RIGHT JOIN u ON t.a = u.a", ["join"]),
    ("full join", "SELECT t.a, u.a AS ua FROM t FULL OUTER JOIN u ON t.a = u.a AND t.c < 25", ["join"]),
    ("cross join", "SELECT t.a, v.k FROM t CROSS JOIN v WHERE v.k > 10", ["filter", "join"]),
    ("comma join", "SELECT t.a, u.f, v.w FROM t, u, v WHERE t.a = u.a AND u.c / 10 = v.k", ["filter", "join", "join"]),
    ("self join", "SELECT x.a, y.c FROM t x JOIN t y ON x.a = y.a AND x.c <> y.c", ["join"]),
    ("using", "SELECT a, t.b, u.f FROM t JOIN u USING (a)", ["join"]),
    ("full using", "SELECT a, t.b, u.f FROM t FULL JOIN u USING (a)", ["join"]),
    ("natural", "SELECT a, c, t.b FROM t NATURAL JOIN u", ["join"]),
    ("left semi", "SELECT t.a, t.b FROM t LEFT SEMI JOIN u ON t.a = u.a", ["join"]),
    ("left anti", "SELECT t.a, t.b FROM t LEFT ANTI JOIN u ON t.a = u.a", ["join"]),
    ("joins mixed", "SELECT t.a, u.f, v.w FROM t LEFT JOIN u ON t.a = u.a JOIN v ON v.k = t.c", ["join", "join"]),
    # --- FROM subqueries and CTEs
    (
        "derived",
        "SELECT s.a, s.total FROM (SELECT a, sum(c) AS total FROM t GROUP BY a) s WHERE s.total > 10",
        ["filter", "alias", "project", "aggregate"],
    ),
    ("derived cols", "SELECT x.p, x.q FROM (SELECT a, b FROM t) AS x(p, q) WHERE x.p > 1", ["alias"]),
    (
        "cte",
        "WITH big AS (SELECT * FROM t WHERE c >= 20) SELECT big.a, u.f FROM big JOIN u ON big.a = u.a",
        ["join", "alias", "filter"],
    ),
    (
        "cte twice",
        "WITH s AS (SELECT a, count(*) AS n FROM t GROUP BY a) SELECT x.a, y.n FROM s x JOIN s y ON x.a = y.a + 1",
        ["join", "alias", "alias"],
    ),
    (
        "cte chain",
        "WITH s AS (SELECT a, c FROM t WHERE c IS NOT NULL), r AS (SELECT a, c * 2 AS c2 FROM s) "
        "SELECT a, c2 FROM r WHERE c2 > 30",
        ["filter", "alias"],
    ),
    # --- aggregation
    (
        "group having",
        "SELECT b, count(*) AS n, sum(c) AS s FROM t GROUP BY b HAVING count(*) > 1",
        ["project", "filter", "aggregate"],
    ),
    (
        "having hidden agg",
        "SELECT b, sum(c) AS s FROM t GROUP BY b HAVING max(e) > 1 AND min(a) < 5",
        ["filter", "aggregate"],
    ),
    (
        "count distinct",
        "SELECT count(DISTINCT b) AS nb, count(c) AS nc, count(*) AS n, avg(e) AS av FROM t",
        ["aggregate"],
    ),
    ("group expr", "SELECT substring(b, 1, 1) AS k, sum(c) AS s FROM t GROUP BY substring(b, 1, 1)", ["aggregate"]),
    ("group alias ordinal", "SELECT b AS bb, c > 15 AS big, count(*) AS n FROM t GROUP BY 1, 2", ["aggregate"]),
    ("agg expression", "SELECT a, sum(c) * 2 + count(*) AS x, max(e) - min(e) AS rng FROM t GROUP BY a", ["aggregate"]),
    ("agg case", "SELECT sum(CASE WHEN b = 'x' THEN c ELSE 0 END) / sum(c) AS share FROM t", ["aggregate"]),
    # --- windows
    ("window rank", "SELECT a, b, rank() OVER (PARTITION BY b ORDER BY c DESC) AS r FROM t", ["project", "window"]),
    (
        "window two specs",
        "SELECT a, row_number() OVER (ORDER BY a, c, e) AS rn, "
        "sum(c) OVER (PARTITION BY b) AS sb, count(*) OVER (PARTITION BY b) AS cb FROM t",
        ["window", "window"],
    ),
    (
        "window frame",
        "SELECT a, sum(c) OVER (PARTITION BY b ORDER BY a, e ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM t",
        ["window"],
    ),
    (
        "window over agg",
        "SELECT b, sum(c) AS s, rank() OVER (ORDER BY sum(c)) AS r FROM t GROUP BY b",
        ["window", "aggregate"],
    ),
    (
        "window lag",
        "SELECT a, lag(c) OVER (PARTITION BY b ORDER BY a, e) AS prev FROM t WHERE a IS NOT NULL",
        ["window", "filter"],
    ),
    # --- set operations
    ("union", "SELECT a FROM t UNION SELECT a FROM u", ["union"]),
    ("union all", "SELECT a, b FROM t UNION ALL SELECT a, f FROM u UNION ALL SELECT k, w FROM v", ["union"]),
    ("intersect", "SELECT a FROM t INTERSECT SELECT a FROM u", ["intersect"]),
    ("except", "SELECT a FROM t EXCEPT SELECT a FROM u", ["except"]),
    ("intersect all", "SELECT a FROM t INTERSECT ALL SELECT a FROM u", ["intersect"]),
    ("except all", "SELECT a FROM t EXCEPT ALL SELECT a FROM u", ["except"]),
    (
        "union order limit",
        "SELECT a, b FROM t UNION SELECT a, f FROM u ORDER BY a DESC NULLS LAST, b LIMIT 4",
        ["limit", "sort", "union"],
    ),
    # --- order, limit, distinct
    ("order limit", "SELECT a, c FROM t ORDER BY c DESC, a LIMIT 3", ["limit", "sort", "project"]),
    ("order offset", "SELECT a, c FROM t ORDER BY a NULLS LAST, c LIMIT 3 OFFSET 2", ["limit", "sort"]),
    ("order hidden", "SELECT a FROM t ORDER BY e DESC NULLS FIRST, c LIMIT 4", ["project", "limit", "sort"]),
    ("order agg", "SELECT b FROM t GROUP BY b ORDER BY sum(c) DESC NULLS LAST, b LIMIT 2", ["project", "limit"]),
    ("order ordinal", "SELECT b, count(*) AS n FROM t GROUP BY b ORDER BY 2 DESC, 1", ["sort", "project"]),
    (
        "derived order limit",
        "SELECT s.a FROM (SELECT a FROM t ORDER BY c DESC NULLS LAST, a LIMIT 2) s",
        ["alias", "limit"],
    ),
    ("branch limit", "SELECT a FROM t UNION ALL (SELECT a FROM u ORDER BY a NULLS LAST LIMIT 2)", ["union", "limit"]),
    ("distinct", "SELECT DISTINCT b, a FROM t", ["distinct", "project"]),
    ("distinct order", "SELECT DISTINCT b FROM t ORDER BY b LIMIT 2", ["limit", "sort", "distinct"]),
    # --- subqueries
    ("exists", "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a)", ["filter"]),
    ("not exists", "SELECT a FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.a = t.a AND u.c > 150)", ["filter"]),
    ("in subquery", "SELECT a, b FROM t WHERE a IN (SELECT a FROM u WHERE c > 50)", ["filter"]),
    ("not in nulls", "SELECT a, b FROM t WHERE a NOT IN (SELECT a FROM u)", ["filter"]),
    ("not in no nulls", "SELECT a, b FROM t WHERE a NOT IN (SELECT a FROM u WHERE a IS NOT NULL)", ["filter"]),
    ("scalar", "SELECT a FROM t WHERE c > (SELECT avg(c) FROM u) / 10", ["filter"]),
    ("correlated scalar", "SELECT a, c FROM t WHERE c * 10 < (SELECT max(u.c) FROM u WHERE u.a = t.a)", ["filter"]),
    ("scalar in select", "SELECT a, (SELECT count(*) FROM u WHERE u.a = t.a) AS n FROM t", ["project"]),
    (
        "scalar with limit",
        "SELECT a, (SELECT c FROM u WHERE u.a = t.a ORDER BY c NULLS LAST LIMIT 1) AS uc FROM t",
        ["project"],
    ),
    ("in union subquery", "SELECT a FROM t WHERE a IN (SELECT a FROM u UNION SELECT k FROM v)", ["filter"]),
    ("window of aggregate", "SELECT b, sum(sum(c)) OVER () AS total FROM t GROUP BY b", ["window", "aggregate"]),
    (
        "subquery in having",
        "SELECT b, sum(c) AS s FROM t GROUP BY b HAVING sum(c) > (SELECT min(c) FROM u)",
        ["filter", "aggregate"],
    ),
    (
        "nested subqueries",
        "SELECT a FROM t WHERE a IN (SELECT a FROM u WHERE EXISTS (SELECT 1 FROM v WHERE v.k * 10 = u.c OR v.k = t.c))",
        ["filter"],
    ),
]


def _ops(node: dict[str, Any]) -> list[str]:
    out = [node["op"]]
    for key in ("input", "left", "right"):
        if key in node:
            out.extend(_ops(node[key]))
    for child in node.get("inputs", []):
        out.extend(_ops(child))
    return out


def _is_subsequence(needle: list[str], hay: list[str]) -> bool:
    it = iter(hay)
    return all(any(x == y for y in it) for x in needle)


@pytest.fixture(scope="module")
def con() -> Any:
    connection = connect()
    yield connection
    connection.close()


@pytest.mark.parametrize(("name", "sql", "ops"), CASES, ids=[c[0] for c in CASES])
def test_round_trip(con: Any, name: str, sql: str, ops: list[str]) -> None:
    plan = sql_to_plan(sql, CATALOG, "spark")
    assert _is_subsequence(ops, _ops(plan)), f"{name}: plan ops {_ops(plan)} lack {ops}"
    expected = rows(con, spark_to_duckdb(sql))
    duck_sql = plan_to_sql(plan, "duckdb")
    assert rows(con, duck_sql) == expected, duck_sql

    spark_sql = plan_to_sql(plan, "spark")
    again = sql_to_plan(spark_sql, CATALOG, "spark")
    assert rows(con, plan_to_sql(again, "duckdb")) == expected, spark_sql


def test_ids_are_unique_preorder() -> None:
    plan = sql_to_plan("SELECT a FROM t WHERE a IN (SELECT a FROM u) ORDER BY a LIMIT 2", CATALOG)
    ids: list[str] = []

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            if "op" in value:
                ids.append(value["id"])
            for v in value.values():
                visit(v)
        elif isinstance(value, list):
            for v in value:
                visit(v)

    visit(plan)
    assert ids[0] == "n1"
    assert len(ids) == len(set(ids))


def test_where_is_one_filter_above_joins() -> None:
    plan = sql_to_plan("SELECT t.a FROM t, u, v WHERE t.a = u.a AND v.k = t.c AND u.c > 1 AND t.b = 'x'", CATALOG)
    filt = plan["input"]
    assert filt["op"] == "filter" and filt["predicate"]["fn"] == "and"
    assert len(filt["predicate"]["args"]) == 4
    assert filt["input"]["op"] == "join" and filt["input"]["type"] == "cross"


def test_interval_folds_to_date_literal() -> None:
    plan = sql_to_plan("SELECT a FROM t WHERE d < date '1998-12-01' - interval '90' day", CATALOG)
    assert plan["input"]["predicate"]["args"][1] == {"lit": "1998-09-02", "type": "date"}
    plan = sql_to_plan("SELECT a FROM t WHERE d < date '1995-01-31' + interval '1' month", CATALOG)
    assert plan["input"]["predicate"]["args"][1] == {"lit": "1995-02-28", "type": "date"}


def test_subquery_expressions_shape() -> None:
    plan = sql_to_plan(
        "SELECT a FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.a = t.a) AND c NOT IN (SELECT c FROM u)", CATALOG
    )
    first, second = plan["input"]["predicate"]["args"]
    assert first["fn"] == "not" and first["args"][0]["kind"] == "exists"
    assert second["fn"] == "not" and second["args"][0]["kind"] == "in"
    assert second["args"][0]["args"] == [{"col": "t.c"}]
    inner_filter = first["args"][0]["subquery"]["input"]
    assert inner_filter["predicate"]["args"] == [{"col": "u.a"}, {"col": "t.a"}]


def test_having_hidden_aggregate_dropped_by_project() -> None:
    plan = sql_to_plan("SELECT b, sum(c) AS s FROM t GROUP BY b HAVING max(e) > 1", CATALOG)
    assert [x["as"] for x in plan["exprs"]] == ["b", "s"]
    agg = plan["input"]["input"]
    assert agg["op"] == "aggregate"
    assert [x["as"] for x in agg["aggregates"]] == ["s", "_a1"]
    assert agg["group_by"] == [{"col": "t.b"}]


def test_literal_types() -> None:
    plan = sql_to_plan("SELECT a FROM t WHERE c = 5 AND e > 0.06 AND e < 1e3 AND a < 3000000000 AND b = 'q'", CATALOG)
    lits = [arg["args"][1] for arg in plan["input"]["predicate"]["args"]]
    assert lits == [
        {"lit": 5, "type": "int"},
        {"lit": 0.06, "type": "decimal"},
        {"lit": 1000.0, "type": "double"},
        {"lit": 3000000000, "type": "bigint"},
        {"lit": "q", "type": "string"},
    ]
