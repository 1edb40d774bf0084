"""Joins of every type: WHERE predicates into preserved sides, ON predicates into null-supplying sides."""

import pytest

from tests.costmodel.dsl import and_, c, decision, filter_, join, run, scan, table

T = {"l": table(["k", "x"], rows=1000), "r": table(["k", "z"], rows=1000)}


def where_plan(join_type, predicate):
    on = None if join_type == "cross" else c("l.k") == c("r.k")
    return filter_(join(scan("l"), scan("r"), on, type=join_type, id="j"), predicate)


def landed_in(result, table_name):
    """The scan whose filters hold something, or None if nothing moved into that scan."""
    for node in _walk(result.plan):
        if getattr(node, "table", None) == table_name:
            return bool(node.filters)
    return False


def _walk(node):
    from costmodel.plan import walk_plan

    return walk_plan(node)


# join type -> (left predicate may enter the left side, right predicate may enter the right side)
WHERE = {
    "inner": (True, True),
    "cross": (True, True),
    "left": (True, False),
    "right": (False, True),
    "full": (False, False),
}


@pytest.mark.parametrize("join_type", sorted(WHERE))
def test_where_predicates_enter_preserved_sides_only(join_type):
    left_ok, right_ok = WHERE[join_type]
    # IS NULL does not reject the NULL padding, so the outer joins stay outer
    result = run(where_plan(join_type, c("l.x").is_null()), T, mode="always")
    assert landed_in(result, "l") is left_ok
    result = run(where_plan(join_type, c("r.z").is_null()), T, mode="always")
    assert landed_in(result, "r") is right_ok
    if not right_ok:
        assert decision(result, "r.z IS NULL", "j")["reason"] in ("null_supplying_side", "full_join")


@pytest.mark.parametrize("join_type", ["semi", "anti"])
def test_where_predicates_on_semi_and_anti_joins_go_left(join_type):
    result = run(where_plan(join_type, c("l.x") > 1), T, mode="always")
    assert landed_in(result, "l") and not landed_in(result, "r")


# join type -> (ON conjunct on the left may enter the left, ON conjunct on the right may enter the right)
ON = {
    "inner": (True, True),
    "left": (False, True),
    "right": (True, False),
    "full": (False, False),
    "semi": (True, True),
    "anti": (False, True),
}


@pytest.mark.parametrize("join_type", sorted(ON))
def test_on_predicates_enter_null_supplying_sides_only(join_type):
    left_ok, right_ok = ON[join_type]
    plan = join(scan("l"), scan("r"), and_(c("l.k") == c("r.k"), c("l.x") > 1, c("r.z") > 2), type=join_type, id="j")
    result = run(plan, T, mode="always")
    assert landed_in(result, "l") is left_ok
    assert landed_in(result, "r") is right_ok
    if not left_ok:
        assert decision(result, "l.x > 1", "j")["reason"] in ("preserved_side_on_predicate", "full_join")
        assert "l.x > 1" in str(result.plan.on) or "l.x" in repr(result.plan.on)


def test_null_aware_anti_join_keeps_its_condition():
    plan = join(scan("l"), scan("r"), and_(c("l.k") == c("r.k"), c("r.z") > 2), type="anti", id="j", null_aware=True)
    result = run(plan, T, mode="always")
    assert not landed_in(result, "r")
    assert decision(result, "r.z > 2", "j")["reason"] == "null_aware_anti_join"


def test_predicate_reading_both_sides_stays_above():
    result = run(where_plan("inner", c("l.x") < c("r.z")), T, mode="always")
    assert decision(result, "l.x < r.z", "j")["reason"] == "references_both_sides"


def test_self_join_resolves_each_side_by_identity():
    tables = {"t": table(["id", "x"], rows=100)}
    plan = filter_(join(scan("t", "a"), scan("t", "b"), c("a.id") == c("b.id"), id="j"), c("b.x") > 1)
    result = run(plan, tables, mode="always")
    scans = [n for n in _walk(result.plan) if getattr(n, "table", None) == "t"]
    assert [bool(s.filters) for s in scans] == [False, True]


def test_equality_across_a_cross_join_becomes_its_join_key():
    plan = filter_(join(scan("l"), scan("r"), type="cross", id="j"), and_(c("l.k") == c("r.k"), c("l.x") < c("r.z")))
    result = run(plan, T)
    from tests.costmodel.dsl import after, tree

    assert after(result) == tree("""
        Filter: l.x < r.z
          Inner Join: l.k = r.k
            TableScan: l
            TableScan: r
    """)
    assert decision(result, "l.k = r.k", "j")["reason"] == "into_join_condition"
    assert result.total_after < result.total_before / 10


def test_comma_join_equalities_all_become_join_keys_in_cost_mode():
    """TPC-H Q3's shape: c.ck = o.ck was once kept above a cross join, costing 600x the best plan."""
    from tests.costmodel.dsl import after, tree

    tables = {
        "c": table(["ck", "seg"], rows=150_000, ck={"ndv": 150_000}, seg={"ndv": 5}),
        "o": table(["ok", "ck"], rows=1_500_000, ok={"ndv": 1_500_000}, ck={"ndv": 100_000}),
        "l": table(["ok"], rows=6_000_000, ok={"ndv": 1_500_000}),
    }
    cross = join(join(scan("c"), scan("o"), type="cross"), scan("l"), type="cross")
    plan = filter_(cross, and_(c("c.seg") == "B", c("c.ck") == c("o.ck"), c("l.ok") == c("o.ok")))
    cost, always = run(plan, tables), run(plan, tables, mode="always")
    assert cost.total_after == always.total_after
    assert after(cost) == tree("""
        Inner Join: l.ok = o.ok
          Inner Join: c.ck = o.ck
            TableScan: c filters=[c.seg = 'B']
            TableScan: o
          TableScan: l
    """)
