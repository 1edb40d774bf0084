"""Never an answer worse than rule-based pushdown: cheap predicates placed by rule, joins in Catalyst's order, and
no plan the model itself prices above the rule-based one (issue "Never slower than Spark alone")."""

from __future__ import annotations

import random

import pytest

from costmodel import catalog_from_wire, optimize, options_from_wire
from costmodel.wire import plan_from_wire
from tests.correctness.plangen import PlanGenerator, catalog, make_rows
from tests.costmodel.dsl import after, c, decision, filter_, join, project, run, scan, table, tree, udf

T = {
    "big": table(["k", "x"], rows=100_000, k={"ndv": 1000}, x={"min": 0, "max": 100, "ndv": 100}),
    "small": table(["k", "y"], rows=10, k={"ndv": 10}),
}


def join_plan(predicate):
    return filter_(join(scan("big"), scan("small"), c("big.k") == c("small.k"), id="j"), predicate, id="f")


def test_a_cheap_predicate_the_model_would_hold_goes_where_rule_based_pushdown_puts_it():
    """Above a join that keeps 1 row in 100, the model's totals keep a comparison that drops 5% of the rows; by
    default a comparison is placed by rule, and the log says so with the numbers the model had."""
    result = run(join_plan(c("big.x") > 5), T)
    row = decision(result, "big.x > 5", "j")
    assert row["action"] == "pushed" and row["reason"] == "cheap_predicate"
    assert row["cost_if_pushed"] > row["cost_if_kept"]
    assert "TableScan: big filters=[big.x > 5]" in after(result)


def test_a_decision_that_flips_inside_the_interval_takes_the_smaller_worst_case_loss():
    """Placed by the model (expensive_threshold 0), the comparison would stay above the join at its point estimate
    (0.95), but its interval [0.475, 1] reaches where pushing pays: costed at both ends, rule-based pushdown loses
    less at worst, and the log shows both placements' costs at both ends."""
    result = run(join_plan(c("big.x") > 5), T, expensive_threshold=0)
    row = decision(result, "big.x > 5", "j")
    robust = row["robust"]
    assert row["action"] == "pushed" and row["uncertain"] is True and robust["picked"] == "rule_based"
    assert robust["interval"] == [0.475, 1.0]
    held, rule = robust["held"], robust["rule_based"]
    assert held["cost_at_high"] < rule["cost_at_high"] and rule["cost_at_low"] < held["cost_at_low"]
    assert rule["worst_loss"] <= held["worst_loss"]


def test_an_expensive_predicate_is_still_placed_by_cost():
    result = run(join_plan(udf("score", c("big.x"), cost=5000) > 1), T)
    assert decision(result, "score(big.x) > 1", "j")["action"] == "kept"


def test_a_comma_join_runs_in_catalyst_order_with_every_condition_on_a_join():
    """``FROM a, c, b WHERE a.k = b.k AND b.k = c.k``: written, a and c meet in a cross product; Catalyst joins
    a with b first (the first input connected to a), then c."""
    tables = {n: table(["k", "v"], rows=1000 * (i + 1), k={"ndv": 500}) for i, n in enumerate("abc")}
    plan = filter_(
        join(
            join(scan("a", id="sa"), scan("c", id="sc"), None, type="cross", id="j1"),
            scan("b", id="sb"),
            None,
            type="cross",
            id="j2",
        ),
        (c("a.k") == c("b.k")) & (c("b.k") == c("c.k")),
    )
    result = run(project(plan, k=c("a.k")), tables)
    text = after(result)
    assert "Cross Join" not in text
    assert (
        tree("""
        Projection: a.k
          Inner Join: b.k = c.k
            Inner Join: a.k = b.k
              TableScan: a
              TableScan: b
            TableScan: c
    """)
        == text
    )


def test_a_chain_under_anything_but_a_projection_or_aggregate_keeps_its_written_order():
    tables = {n: table(["k"], rows=100) for n in "abc"}
    plan = filter_(
        join(join(scan("a"), scan("c"), None, type="cross"), scan("b"), None, type="cross"),
        (c("a.k") == c("b.k")) & (c("b.k") == c("c.k")),
    )
    text = after(run(plan, tables))
    assert text.index("TableScan: c") < text.index("TableScan: b")


@pytest.mark.parametrize("seed", range(300))
def test_no_answer_is_priced_above_rule_based_pushdown(seed):
    """Placement decides one predicate at a time; whatever it ends with, the answer is never priced above the plan
    rule-based pushdown runs (the engine falls back to that plan, with a warning)."""
    rng = random.Random(seed)
    rows = {name: make_rows(rng, name, 40) for name in ("t1", "t2", "t3")}
    wire = PlanGenerator(random.Random(seed)).query()
    cat = catalog_from_wire(catalog(rows))
    opts = options_from_wire({"mode": "cost", "expensive_threshold": 0})
    result = optimize(plan_from_wire(wire, cat, functions=opts.functions), cat, opts, baseline=True)
    assert result.baseline_total is not None
    assert result.total_after <= result.baseline_total * (1 + 1e-9) + 1e-9
