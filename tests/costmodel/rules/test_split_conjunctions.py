"""Conjunctions split and move part by part; stacked filters merge; constants fold."""

from tests.costmodel.dsl import (
    after,
    and_,
    c,
    decision,
    f,
    filter_,
    join,
    lit,
    or_,
    run,
    scan,
    table,
    tree,
)

T = {"t": table(["a", "b"], rows=1000), "u": table(["k", "z"], rows=1000)}


def test_each_conjunct_goes_its_own_way():
    plan = filter_(join(scan("t"), scan("u"), c("a") == c("k")), and_(c("b") > 1, c("z") < 3, c("b") < c("z")))
    assert after(run(plan, T, mode="always")) == tree("""
        Filter: b < z
          Inner Join: a = k
            TableScan: t filters=[b > 1]
            TableScan: u filters=[z < 3]
    """)


def test_stacked_filters_merge_into_one():
    plan = filter_(filter_(scan("t"), c("a") > 1), c("b") > 2)
    assert after(run(plan, T, mode="always", scan_pushdown=False)) == tree("""
        Filter: a > 1 AND b > 2
          TableScan: t
    """)


def test_two_nondeterministic_filters_are_never_merged():
    plan = filter_(filter_(scan("t"), f("rand") < 0.5), f("rand") < 0.3)
    assert after(run(plan, T, mode="always")) == tree("""
        Filter: rand() < 0.3
          Filter: rand() < 0.5
            TableScan: t
    """)


def test_conjuncts_after_a_nondeterministic_one_stay_with_it():
    plan = filter_(scan("t"), and_(c("a") > 1, f("rand") < 0.5, c("b") > 2))
    result = run(plan, T, mode="always")
    assert after(result) == tree("""
        Filter: rand() < 0.5 AND b > 2
          TableScan: t filters=[a > 1]
    """)
    assert decision(result, "b > 2", "n2")["reason"] == "after_nondeterministic_conjunct"


def test_a_conjunct_that_can_raise_stays_behind_its_guard():
    plan = filter_(join(scan("t"), scan("u"), c("a") == c("k")), and_(c("b") != 0, (c("z") / c("b")) > 1))
    result = run(plan, T, mode="always")
    assert after(result) == tree("""
        Filter: z / b > 1
          Inner Join: a = k
            TableScan: t filters=[b != 0]
            TableScan: u
    """)


def test_a_predicate_that_can_raise_does_not_go_below_the_filter_guarding_it():
    plan = filter_(filter_(scan("t"), c("b") != 0), (c("a") / c("b")) > 1)
    result = run(plan, T, mode="always")
    assert after(result) == tree("""
        Filter: a / b > 1
          TableScan: t filters=[b != 0]
    """)


def test_division_by_a_nonzero_literal_cannot_raise_and_moves():
    plan = filter_(filter_(scan("t"), c("b") != 0), (c("a") / 2) > 1)
    assert after(run(plan, T, mode="always")) == tree("""
        TableScan: t filters=[b != 0, a / 2 > 1]
    """)


def test_always_false_predicate_empties_the_result():
    plan = filter_(join(scan("t"), scan("u"), c("a") == c("k")), lit(1) == lit(0))
    result = run(plan, T)
    assert result.after[0].rows_out == 0
    assert any(r["rule"] == "never_true" for r in result.rewrites)
    assert "FALSE" in after(result)


def test_equality_with_null_is_never_true():
    plan = filter_(scan("t"), c("a") == lit(None))
    result = run(plan, T)
    assert result.after[0].rows_out == 0
    assert result.warnings and "never true" in result.warnings[-1]


def test_always_true_conjunct_is_removed():
    plan = filter_(scan("t"), and_(lit(1) == lit(1), c("a") > 5))
    result = run(plan, T, mode="always")
    assert after(result) == "TableScan: t filters=[a > 5]"
    assert result.rewrites[0]["rule"] == "remove_always_true"


def test_a_cast_of_a_computed_string_can_raise_and_stays_behind_its_guard():
    cast = {"fn": "cast", "args": [{"fn": "concat", "args": [{"col": "s"}, {"lit": "1"}]}], "type": "int"}
    tables = {"t": table({"a": "int", "s": "string"}, rows=1000)}
    plan = filter_(filter_(scan("t"), c("a") > 0), {"fn": ">", "args": [cast, {"lit": 3}]})
    assert after(run(plan, tables, mode="always")) == tree("""
        Filter: CAST(concat(s, '1') AS int) > 3
          TableScan: t filters=[a > 0]
    """)


def test_a_conjunct_shared_by_every_branch_of_an_or_stands_alone():
    """TPC-H Q19: the join key repeated in each branch becomes the join's key."""
    tables = {"l": table(["pk", "q"], rows=6000), "p": table(["pk", "brand"], rows=200)}
    branch = lambda brand, low: and_(c("p.pk") == c("l.pk"), c("p.brand") == brand, c("l.q") >= low)  # noqa: E731
    plan = filter_(join(scan("l"), scan("p"), type="cross"), or_(branch("b12", 1), branch("b23", 10)))
    assert after(run(plan, tables, mode="always")) == tree("""
        Filter: p.brand = 'b12' AND l.q >= 1 OR p.brand = 'b23' AND l.q >= 10
          Inner Join: p.pk = l.pk
            TableScan: l filters=[l.q >= 1 OR l.q >= 10]
            TableScan: p filters=[p.brand IN ('b12', 'b23')]
    """)


def test_shared_conjuncts_are_found_in_any_order_and_the_rest_stay_in_their_branches():
    """Each branch lists the shared conjuncts in its own order; one shared by two of three branches stays."""
    plan = filter_(
        scan("t"),
        or_(
            and_(c("a") == 1, c("b") == 2, c("a") == 3),
            and_(c("b") == 2, c("a") == 4, c("a") == 1),
            and_(c("a") == 5, c("a") == 1, c("b") == 2, c("a") == 4),
        ),
    )
    assert after(run(plan, T, mode="always")) == tree("""
        TableScan: t filters=[a = 1, b = 2, a = 3 OR a = 4 OR a = 5 AND a = 4]
    """)


def test_each_conjuncts_shape_is_computed_once(monkeypatch):
    """An OR of 40 branches of 30 conjuncts: the shapes compared are computed once each, not pairwise."""
    from costmodel.expr import Call, Column, Expr, Literal
    from costmodel.expr import and_ as expr_and
    from costmodel.expr import or_ as expr_or
    from costmodel.rules import split_conjunctions

    calls = []
    real = split_conjunctions._shape
    monkeypatch.setattr(split_conjunctions, "_shape", lambda e: calls.append(e) or real(e))
    key = Call("=", (Column("a", 1), Literal(0, "int")))
    own = lambda b: [Call("=", (Column("b", 2), Literal(b * 100 + i, "int"))) for i in range(29)]  # noqa: E731
    branches: list[Expr] = [expr_and([*own(b), key]) for b in range(40)]
    parts = split_conjunctions.factor_common_conjuncts(expr_or(branches))
    assert parts[0] == key and len(parts) == 2
    assert len(calls) == 40 * 30
