"""Every example of the four seed documents, with the seeds' own numbers."""

from __future__ import annotations

import pytest

from tests.costmodel.dsl import (
    after,
    aggregate,
    and_,
    c,
    decision,
    f,
    filter_,
    join,
    or_,
    project,
    run,
    scan,
    sort,
    table,
    tree,
    udf,
    union,
)

# ------------------------------------------------------------------ Polars

POLARS_TABLES = {
    "df1": table({"foo": "string", "idx1": "int", "a": "int"}, rows=3),
    "df2": table({"bar": "int", "idx2": "int", "b": "int"}, rows=2),
}


def test_polars_join_sends_each_predicate_to_its_side_and_keeps_the_mixed_one_above():
    plan = filter_(
        filter_(
            filter_(join(scan("df1"), scan("df2"), c("idx1") == c("idx2")), c("bar") == 5),
            c("foo") == "abc",
        ),
        (c("a") + c("b")) > 12,
    )
    result = run(plan, POLARS_TABLES, mode="always")
    assert after(result) == tree("""
        Filter: a + b > 12
          Inner Join: idx1 = idx2
            TableScan: df1 filters=[foo = 'abc']
            TableScan: df2 filters=[bar = 5]
    """)
    assert decision(result, "a + b > 12", result.plan.input.id)["reason"] == "references_both_sides"


def test_polars_join_cost_mode_agrees():
    plan = filter_(
        join(scan("df1"), scan("df2"), c("idx1") == c("idx2")),
        and_(c("bar") == 5, c("foo") == "abc", (c("a") + c("b")) > 12),
    )
    assert after(run(plan, POLARS_TABLES)) == tree("""
        Filter: a + b > 12
          Inner Join: idx1 = idx2
            TableScan: df1 filters=[foo = 'abc']
            TableScan: df2 filters=[bar = 5]
    """)


def test_polars_boundary_vals_greater_than_min_is_neither_merged_nor_reordered():
    plan = filter_(filter_(scan("df"), c("vals") > 1), c("vals") > f("min", c("vals")))
    result = run(plan, {"df": table(["vals"], rows=5)}, mode="always")
    assert after(result) == tree("""
        Filter: vals > min(vals)
          TableScan: df filters=[vals > 1]
    """)
    assert decision(result, "vals > min(vals)", result.plan.input.id)["reason"] == "aggregate_in_predicate"


def test_polars_boundary_a_plain_filter_above_does_not_cross_the_aggregate_filter():
    plan = filter_(filter_(scan("df"), c("vals") > f("min", c("vals"))), c("vals") > 1)
    result = run(plan, {"df": table(["vals"], rows=5)}, mode="always")
    assert after(result) == tree("""
        Filter: vals > 1
          Filter: vals > min(vals)
            TableScan: df
    """)


# ------------------------------------------------------------------ DataFusion benefit model

N, M = 1_000_000, 10
STUDENTS = {"student_table": table({"major": "string", "country": "string"}, rows=N, major={"ndv": M})}


def having_plan():
    return project(
        filter_(
            aggregate(scan("student_table"), [c("major")], countries=f("array_agg", c("country"), distinct=True)),
            c("major") == "CS",
        ),
        major=c("major"),
        countries=c("countries"),
    )


def test_having_major_cs_before_and_after_totals_match_the_seed():
    result = run(having_plan(), STUDENTS, scan_pushdown=False)
    assert result.total_before == 5 * N + M + 1
    assert result.total_after == 2 * N + 4 * N / M + 1
    assert after(result) == tree("""
        Projection: major, countries
          Aggregate: groupBy=[major], aggr=[array_agg(DISTINCT country) AS countries]
            Filter: major = 'CS'
              TableScan: student_table
    """)


def test_having_major_cs_cost_tables_match_the_seed_rows():
    result = run(having_plan(), STUDENTS, scan_pushdown=False)
    rows = [(n.operator, n.rows_in, n.rows_out, n.k) for n in result.before]
    assert rows == [("project", 1, 1, 1), ("filter", M, 1, 1), ("aggregate", N, M, 4), ("scan", N, N, 1)]
    rows = [(n.operator, n.rows_in, n.rows_out, n.k) for n in result.after]
    assert rows == [("project", 1, 1, 1), ("aggregate", N / M, 1, 4), ("filter", N, N / M, 1), ("scan", N, N, 1)]


def test_having_decision_shows_the_inequality():
    result = run(having_plan(), STUDENTS)
    d = decision(result, "major = 'CS'", "n3")
    assert d["action"] == "pushed" and d["reason"] == "beneficial"
    assert d["p"] == pytest.approx(1 - 1 / M)
    assert d["r1"] == 4
    assert d["lhs"] <= d["rhs"]
    assert d["cost_if_pushed"] < d["cost_if_kept"]


def test_case_r_equal_1_pushes_through_sort_whenever_the_filter_removes_something():
    plan = filter_(sort(scan("t"), c("a")), c("a") > 5)
    result = run(plan, {"t": table(["a"], rows=1000, a={"min": 0, "max": 10})}, scan_pushdown=False)
    d = decision(result, "a > 5", result.original.input.id)
    assert d["r"] == 1 and d["lhs"] == 0 and d["rhs"] > 0
    assert d["action"] == "pushed"
    assert after(result) == tree("""
        Sort: a ASC
          Filter: a > 5
            TableScan: t
    """)


def test_case_r_greater_than_1_pushes_through_union_all():
    plan = filter_(union(scan("t"), scan("u")), c("a") > 5)
    tables = {"t": table(["a"], rows=1000), "u": table(["a"], rows=1000)}
    result = run(plan, tables, scan_pushdown=False)
    assert after(result) == tree("""
        Union All
          Filter: t.a > 5
            TableScan: t
          Filter: u.a > 5
            TableScan: u
    """)


def test_case_r_greater_than_1_pushes_through_cross_join():
    plan = filter_(join(scan("t"), scan("u"), type="cross"), c("t.a") > 5)
    tables = {"t": table(["a"], rows=100), "u": table(["b"], rows=100)}
    result = run(plan, tables, scan_pushdown=False)
    d = decision(result, "t.a > 5", result.original.input.id)
    assert d["r"] > 1 and d["lhs"] < 0 and d["action"] == "pushed"


def test_case_r_less_than_1_expensive_predicate_is_rightly_kept_above_a_reducing_join():
    """r1 < 1: the UDF costs 1000 comparisons, the join keeps 10 of 1,000,000 rows."""
    tables = {
        "l": table(["k", "x"], rows=1_000_000, k={"ndv": 1_000_000}),
        "r": table(["k"], rows=10, k={"ndv": 10}),
    }
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k")), udf("score", c("l.x"), cost=1000) > 0.5)
    result = run(plan, tables)
    join_id = result.original.input.id
    d = decision(result, "score(l.x) > 0.5", join_id)
    assert d["action"] == "kept" and d["reason"] == "not_beneficial"
    assert d["r1"] < 1 and d["lhs"] > d["rhs"]
    assert result.plan.__class__.__name__ == "Filter"
    # a rule-based optimizer pushes it and pays for it
    always = run(plan, tables, mode="always")
    assert always.total_after > result.total_after * 100


# ------------------------------------------------------------------ Dolt

CITIES = {
    "cities": table(
        {"id": "int", "name": "string", "state_id": "int", "population": "int", "first_letter": "string"},
        rows=20000,
        state_id={"ndv": 50},
        id={"ndv": 20000},
    ),
    "states": table(
        {"id": "int", "name": "string", "code": "string", "population": "int", "first_letter": "string"},
        rows=50,
        id={"ndv": 50},
    ),
}


def dolt_query(join_type="inner", where=None):
    base = join(scan("cities", "c"), scan("states", "s"), c("c.state_id") == c("s.id"), type=join_type)
    where = where if where is not None else and_(c("c.name").like("A%"), c("s.name").like("A%"))
    return project(filter_(base, where), city_name=c("c.name"), state_name=c("s.name"))


def test_dolt_cities_and_states_both_predicates_go_below_the_join():
    result = run(dolt_query(), CITIES, scan_pushdown=False)
    assert after(result) == tree("""
        Projection: c.name AS city_name, s.name AS state_name
          Inner Join: c.state_id = s.id
            Filter: c.name LIKE 'A%'
              TableScan: cities AS c
            Filter: s.name LIKE 'A%'
              TableScan: states AS s
    """)
    assert result.total_after < result.total_before


def test_dolt_cross_join_rows_shrink_as_the_post_says():
    plan = project(
        filter_(
            join(scan("cities", "c"), scan("states", "s"), type="cross"),
            and_(c("c.name").like("A%"), c("s.name").like("A%")),
        ),
        city_name=c("c.name"),
    )
    result = run(plan, CITIES)
    join_before = next(n for n in result.before if n.operator == "join")
    join_after = next(n for n in result.after if n.operator == "join")
    assert join_before.rows_out == 20000 * 50  # 1M rows examined
    assert join_after.rows_out == 2000 * 5  # 10% of cities x 10% of states
    assert result.total_after / result.total_before < 0.1


def test_dolt_left_join_caveat_right_side_predicate_stays_above():
    where = and_(c("c.name").like("A%"), or_(c("s.name").like("A%"), c("s.name").is_null()))
    result = run(dolt_query("left", where), CITIES, scan_pushdown=False)
    assert after(result) == tree("""
        Projection: c.name AS city_name, s.name AS state_name
          Filter: s.name LIKE 'A%' OR s.name IS NULL
            Left Join: c.state_id = s.id
              Filter: c.name LIKE 'A%'
                TableScan: cities AS c
              TableScan: states AS s
    """)
    join_id = result.original.input.input.id
    assert decision(result, "s.name LIKE 'A%' OR s.name IS NULL", join_id)["reason"] == "null_supplying_side"


def test_dolt_left_join_whose_where_rejects_nulls_becomes_inner_first():
    result = run(dolt_query("left"), CITIES, scan_pushdown=False)
    assert [r["rule"] for r in result.rewrites] == ["outer_to_inner"]
    assert after(result) == tree("""
        Projection: c.name AS city_name, s.name AS state_name
          Inner Join: c.state_id = s.id
            Filter: c.name LIKE 'A%'
              TableScan: cities AS c
            Filter: s.name LIKE 'A%'
              TableScan: states AS s
    """)
