"""Outer joins become inner (full joins left or right) when a WHERE predicate rejects the NULL padding."""

import pytest

from tests.costmodel.dsl import E, and_, c, f, filter_, join, lit, or_, run, scan, table

T = {"l": table(["k", "y"], rows=1000), "r": table(["k", "x"], rows=1000)}


def converted(join_type, predicate):
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k"), type=join_type, id="j"), predicate)
    result = run(plan, T, mode="always")
    types = [r["to"] for r in result.rewrites if r["rule"] == "outer_to_inner"]
    return types[-1] if types else join_type


def is_not_true(expr):
    return E({"fn": "is_not_true", "args": [expr.d]})


@pytest.mark.parametrize(
    "join_type, predicate, expected",
    [
        ("left", c("r.x") > 5, "inner"),
        ("left", c("r.x").isin(1, 2), "inner"),
        ("left", c("r.x").is_not_null(), "inner"),
        ("left", c("l.y") == c("r.x"), "inner"),
        ("right", c("l.y") > 5, "inner"),
        ("full", c("l.y") > 5, "left"),
        ("full", c("r.x") > 5, "right"),
        ("full", and_(c("l.y") > 5, c("r.x") > 5), "inner"),
    ],
)
def test_rejecting_predicates_convert(join_type, predicate, expected):
    assert converted(join_type, predicate) == expected


@pytest.mark.parametrize(
    "predicate",
    [
        f("coalesce", c("r.x"), 0) == 0,
        c("r.x").is_null(),
        is_not_true(c("r.x") > 5),
        or_(c("r.x") > 5, c("l.y") == 1),
        c("l.y") > 5,
        or_(c("r.x") > 5, c("r.x").is_null()),
    ],
)
def test_non_rejecting_predicates_keep_the_left_join(predicate):
    assert converted("left", predicate) == "left"


def test_after_conversion_the_predicate_goes_into_the_formerly_null_supplying_side():
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k"), type="left", id="j"), c("r.x") > 5)
    result = run(plan, T, mode="always")
    assert result.plan.type == "inner"
    assert [str(p) for p in result.plan.right.filters]


def test_comparison_with_null_literal_is_never_true_and_empties_the_result():
    plan = filter_(join(scan("l"), scan("r"), c("l.k") == c("r.k"), type="left", id="j"), c("r.x") == lit(None))
    result = run(plan, T)
    assert result.after[0].rows_out == 0
    assert any(r["rule"] == "never_true" for r in result.rewrites)
