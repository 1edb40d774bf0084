"""Modes, overridable constants, and the decision log's numbers."""

import pytest

from costmodel import PlanError, catalog_from_wire, options_from_wire
from tests.costmodel.dsl import (
    after,
    aggregate,
    and_,
    c,
    decision,
    f,
    filter_,
    join,
    lit,
    run,
    scan,
    table,
    tree,
    udf,
)

T = {
    "big": table(["k", "x"], rows=100_000, k={"ndv": 100}),
    "small": table(["k", "y"], rows=100, k={"ndv": 100}),
}


def join_plan(predicate):
    return filter_(join(scan("big"), scan("small"), c("big.k") == c("small.k"), id="j"), predicate, id="f")


def test_never_mode_reports_but_leaves_the_plan_alone():
    result = run(join_plan(c("big.x") > 5), T, mode="never")
    assert after(result) == tree("""
        Filter: big.x > 5
          Inner Join: big.k = small.k
            TableScan: big
            TableScan: small
    """)
    d = decision(result, "big.x > 5", "j")
    assert d["action"] == "kept" and d["reason"] == "mode_never"
    assert result.total_after == result.total_before


def test_always_mode_pushes_what_cost_mode_keeps():
    expensive = udf("score", c("big.x"), cost=500) > 0
    reducing = {**T, "small": table(["k", "y"], rows=10, k={"ndv": 10})}  # the join keeps 10% of big
    cost = run(join_plan(expensive), reducing)
    always = run(join_plan(expensive), reducing, mode="always")
    assert decision(cost, "score(big.x) > 0", "j")["action"] == "kept"
    assert decision(always, "score(big.x) > 0", "j")["reason"] == "mode_always"
    assert cost.total_after < always.total_after


def test_operator_constants_change_the_decision():
    # a predicate costing 20 per row above a join keeping 10% of the big side: with join k = 4 pushing
    # it below costs more than it saves; with a join 100 times dearer it pays
    plan = join_plan(udf("score", c("big.x"), cost=20) > 0)
    tables = {**T, "small": table(["k", "y"], rows=10, k={"ndv": 10})}
    assert decision(run(plan, tables), "score(big.x) > 0", "j")["action"] == "kept"
    pushed = run(plan, tables, operator_costs={"join": 400})
    assert decision(pushed, "score(big.x) > 0", "j")["action"] == "pushed"


def test_predicate_costs_are_overridable():
    plan = join_plan(c("big.x").like("A%"))
    tables = {**T, "small": table(["k", "y"], rows=10, k={"ndv": 10})}
    cheap = run(plan, tables)
    assert decision(cheap, "big.x LIKE 'A%'", "j")["action"] == "pushed"
    dear = run(plan, tables, predicate_costs={"like": 1000})
    assert decision(dear, "big.x LIKE 'A%'", "j")["action"] == "kept"


def test_every_decision_carries_the_inequality_where_the_model_applies():
    reducing = {**T, "small": table(["k", "y"], rows=10, k={"ndv": 10})}  # r < 1: the position is costed
    result = run(join_plan(c("big.x") > 5), reducing)
    d = decision(result, "big.x > 5", "j")
    assert d["lhs"] == pytest.approx(1 - d["r"]) and d["rhs"] == pytest.approx(d["p"] * d["r1"])
    assert d["cost_if_pushed"] <= d["cost_if_kept"]


def test_unknown_options_are_refused_with_their_path():
    with pytest.raises(PlanError) as info:
        options_from_wire({"operator_costs": {"jion": 3}})
    assert info.value.path == "$.options.operator_costs.jion" and "join" in info.value.detail["known"]
    with pytest.raises(PlanError):
        options_from_wire({"mode": "sometimes"})


def test_positions_where_pushing_surely_pays_are_not_costed_but_still_explained():
    result = run(join_plan(c("big.x") > 5), T)  # the join keeps every big row: r = 1
    d = decision(result, "big.x > 5", "j")
    assert d["action"] == "pushed" and d["lhs"] == 0 and "cost_if_kept" not in d


def test_cost_table_rows_are_k_times_rows_received():
    result = run(join_plan(c("big.x") > 5), T)
    for row in result.before + result.after:
        assert row.cost == pytest.approx(row.k * row.rows_in)


def test_work_budget_places_the_rest_by_rule_and_says_so():
    plan = scan("big")
    for i in range(700):
        plan = filter_(plan, c("x") > i)
    # placed by cost although cheap (expensive_threshold 0), so that the budget runs out
    result = run(plan, {"big": table(["x"], rows=100)}, expensive_threshold=0)
    assert any("too many predicates" in w for w in result.warnings)
    assert after(result).startswith("TableScan: big filters=")


def test_catalog_statistics_are_validated():
    with pytest.raises(PlanError) as info:
        catalog_from_wire({"tables": {"t": {"columns": ["a"], "row_count": -1}}})
    assert info.value.path == "$.catalog.tables.t.row_count"
    with pytest.raises(PlanError):
        catalog_from_wire({"tables": {"t": {"columns": ["a"], "column_stats": {"a": {"ndv": "many"}}}}})


def test_aggregate_in_having_is_costed_from_group_key_ndv():
    plan = filter_(aggregate(scan("big"), [c("k")], n=f("count")), c("k") == 3)
    result = run(plan, T)
    agg = next(n for n in result.before if n.operator == "aggregate")
    assert agg.rows_out == 100  # NDV of the key
    agg_after = next(n for n in result.after if n.operator == "aggregate")
    assert agg_after.rows_out == pytest.approx(1)


def test_scan_pushdown_must_be_a_boolean():
    with pytest.raises(PlanError) as info:
        options_from_wire({"scan_pushdown": "false"})
    assert info.value.path == "$.options.scan_pushdown"


def test_never_mode_still_warns_about_a_never_true_predicate():
    result = run(filter_(scan("big"), c("x") == lit(None)), T, mode="never")
    assert any("never true" in w for w in result.warnings)


def test_a_join_condition_part_that_cannot_move_is_logged():
    plan = join(scan("big"), scan("small"), c("big.k") == c("small.k"), id="j")
    plan["on"] = {"fn": "and", "args": [plan["on"], (f("rand") < c("small.y")).d]}
    result = run(plan, T)
    assert decision(result, "rand() < small.y", "j")["reason"] == "nondeterministic_predicate"


def test_expensive_udf_stays_above_a_join_that_cheaper_pushed_filters_made_selective():
    """bench/spark_e2e.py's workload: the customer filters go below the join first, so the join keeps
    0.8% of orders; the UDF must be costed against that join, not the one of the original plan."""
    tables = {
        "orders": table(["custkey", "comment"], rows=1_500_000, custkey={"ndv": 100_000}),
        "customer": table(
            ["custkey", "segment", "nation"],
            rows=150_000,
            custkey={"ndv": 150_000},
            segment={"ndv": 5},
            nation={"ndv": 25},
        ),
    }
    joined = join(scan("orders"), scan("customer"), c("orders.custkey") == c("customer.custkey"), id="j")
    predicate = and_(
        c("customer.segment") == "BUILDING", c("customer.nation") == 7, udf("check", c("orders.comment"), cost=5000)
    )
    result = run(filter_(joined, predicate), tables)
    d = next(d for d in result.decisions if d["predicate"].startswith("check(") and d["operator"] == "j")
    assert d["action"] == "kept"
    assert result.total_after < result.total_before
    cheap = run(
        filter_(joined, and_(c("customer.segment") == "BUILDING", udf("check", c("orders.comment"), cost=1))), tables
    )
    assert (
        next(d for d in cheap.decisions if d["predicate"].startswith("check(") and d["operator"] == "j")["action"]
        == "pushed"
    )
