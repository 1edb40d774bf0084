"""Through sort; never through limit, offset, or a sort carrying a limit."""

from tests.costmodel.dsl import after, c, decision, filter_, limit, run, scan, sort, table, tree

T = {"t": table(["a"], rows=1000)}


def test_through_sort():
    plan = filter_(sort(scan("t"), c("a")), c("a") > 1)
    assert after(run(plan, T, mode="always")) == tree("""
        Sort: a ASC
          TableScan: t filters=[a > 1]
    """)


def test_never_through_limit():
    plan = filter_(limit(scan("t"), 10), c("a") > 1)
    result = run(plan, T, mode="always")
    assert after(result) == tree("""
        Filter: a > 1
          Limit: skip=0, fetch=10
            TableScan: t
    """)
    assert decision(result, "a > 1", result.original.input.id)["reason"] == "limit"


def test_never_through_offset():
    plan = filter_(limit(scan("t"), None, offset=5), c("a") > 1)
    result = run(plan, T, mode="always")
    assert decision(result, "a > 1", result.original.input.id)["reason"] == "offset"


def test_never_through_a_sort_with_a_limit():
    plan = filter_(sort(scan("t"), c("a"), limit=3), c("a") > 1)
    result = run(plan, T, mode="always")
    assert after(result) == tree("""
        Filter: a > 1
          Sort: a ASC fetch=3
            TableScan: t
    """)
    assert decision(result, "a > 1", result.original.input.id)["reason"] == "sort_limit"


def test_through_sort_stops_at_the_limit_below():
    plan = filter_(sort(limit(scan("t"), 10), c("a")), c("a") > 1)
    assert after(run(plan, T, mode="always")) == tree("""
        Sort: a ASC
          Filter: a > 1
            Limit: skip=0, fetch=10
              TableScan: t
    """)
