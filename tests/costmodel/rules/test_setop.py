"""Into every branch of union / intersect / except, remapped by position; through distinct and alias."""

import pytest

from tests.costmodel.dsl import after, alias, c, distinct, filter_, project, run, scan, table, tree, union

T = {"t": table(["a", "b"], rows=1000), "u": table(["b", "a"], rows=1000)}


def test_union_branches_with_swapped_columns_are_remapped_by_position():
    # u's first column is b: the union's column "a" is u.b in the second branch
    plan = filter_(union(scan("t"), scan("u")), c("a") > 5)
    assert after(run(plan, T, mode="always")) == tree("""
        Union All
          TableScan: t filters=[t.a > 5]
          TableScan: u filters=[u.b > 5]
    """)


def test_union_branch_that_swaps_columns_in_a_projection():
    branch = project(scan("t"), a=c("b"), b=c("a"))
    plan = filter_(union(scan("t"), branch, all=False), c("a") > 5)
    assert after(run(plan, T, mode="always")) == tree("""
        Union
          TableScan: t filters=[t.a > 5]
          Projection: b AS a, a AS b
            TableScan: t filters=[b > 5]
    """)


@pytest.mark.parametrize("op", ["intersect", "except"])
def test_intersect_and_except_take_the_predicate_on_both_sides(op):
    plan = filter_(union(scan("t"), scan("t"), op=op, all=False), c("b") == 1)
    text = after(run(plan, T, mode="always"))
    assert text.count("filters=[t.b = 1]") == 2


def test_through_distinct():
    plan = filter_(distinct(scan("t")), c("a") > 1)
    assert after(run(plan, T, mode="always")) == tree("""
        Distinct
          TableScan: t filters=[a > 1]
    """)


def test_through_alias_renamed_to_the_inner_names():
    plan = filter_(alias(scan("t"), "x"), c("x.a") > 1)
    assert after(run(plan, T, mode="always")) == tree("""
        SubqueryAlias: x
          TableScan: t filters=[t.a > 1]
    """)
