"""Savings against rule-based pushdown come with the range the estimates' intervals allow."""

from __future__ import annotations

from costmodel import catalog_from_wire, optimize, options_from_wire
from costmodel.wire import plan_from_wire
from tests.costmodel.dsl import c, filter_, join, scan, table, udf

T = {
    "big": table(["k", "x"], rows=100_000, k={"ndv": 1000}),
    "small": table(["k", "y"], rows=10, k={"ndv": 10}),
}


def answer(predicate):
    plan = filter_(join(scan("big"), scan("small"), c("big.k") == c("small.k"), id="j"), predicate)
    cat = catalog_from_wire({"tables": T})
    opts = options_from_wire(None)
    result = optimize(plan_from_wire(plan, cat, functions=opts.functions), cat, opts, baseline=True)
    return result.to_wire_brief()["cost"]


def test_a_held_udf_states_its_savings_with_the_range_and_that_it_rests_on_a_default():
    cost = answer(udf("score", c("big.x"), cost=5000) > 1)
    baseline = cost["baseline"]
    low, high = baseline["savings_interval"]
    point = 1 - cost["after"]["total"] / baseline["total"]
    assert low <= point <= high and 0 < low < high < 1
    assert baseline["on_defaults"] is True  # score(...) > 1 has only the documented default


def test_an_answer_that_is_the_baseline_saves_nothing_for_sure():
    cost = answer(c("big.x") > 5)
    assert cost["baseline"]["savings_interval"] == [0.0, 0.0]
