"""Through an aggregate only on group keys; never below a global aggregate."""

from tests.costmodel.dsl import after, aggregate, c, decision, f, filter_, run, scan, table, tree

T = {"t": table(["k", "v", "d"], rows=1000, k={"ndv": 10})}


def test_predicate_on_a_group_key_goes_below():
    plan = filter_(aggregate(scan("t"), [c("k")], total=f("sum", c("v"))), c("k") > 3)
    assert after(run(plan, T, mode="always")) == tree("""
        Aggregate: groupBy=[k], aggr=[sum(v) AS total]
          TableScan: t filters=[k > 3]
    """)


def test_predicate_on_an_aggregate_result_stays():
    plan = filter_(aggregate(scan("t"), [c("k")], total=f("sum", c("v"))), c("total") > 3)
    result = run(plan, T, mode="always")
    assert decision(result, "total > 3", result.original.input.id)["reason"] == "not_on_group_keys"


def test_never_below_a_global_aggregate():
    plan = filter_(aggregate(scan("t"), [], total=f("count")), c("total") > 0)
    result = run(plan, T, mode="always")
    assert decision(result, "total > 0", result.original.input.id)["reason"] == "global_aggregate"


def test_computed_group_key_is_substituted():
    plan = aggregate(scan("t"), [], total=f("sum", c("v")))
    plan["group_by"] = [{"expr": (c("d") + 1).d, "as": "d1"}]
    result = run(filter_(plan, c("d1") == 5), T, mode="always")
    assert "TableScan: t filters=[d + 1 = 5]" in after(result)


def test_a_predicate_without_columns_is_not_on_the_keys():
    plan = filter_(aggregate(scan("t"), [c("k")], n=f("count")), f("rand") < 0.5)
    plan["predicate"] = {"fn": "=", "args": [{"fn": "current_user", "args": []}, {"lit": "bob"}]}
    result = run(plan, T, mode="always")
    assert decision(result, "current_user() = 'bob'", result.original.input.id)["reason"] == "no_columns"
