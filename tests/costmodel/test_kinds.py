"""Operator kinds own their behaviour: every kind declares every hook, and a new kind needs only its module.

The ``sample`` kind (costmodel/kinds/sample.py): wire round trip, estimate and legality (a barrier) below; its SQL,
Substrait, Spark and client adapters are tested beside theirs (docs/operator-kinds.md lists them).
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass

import pytest

import costmodel.plan
from costmodel import PlanError, catalog_from_wire, optimize_wire, plan_from_wire, plan_to_wire
from costmodel.kinds import all_kinds, kind_for_op, kind_of
from costmodel.kinds.registry import SAME_AS_INPUT, OperatorKind, UnknownKind
from costmodel.options import Options, default_operator_costs
from costmodel.plan import op_name
from tests.costmodel.dsl import after, alias, c, decision, filter_, join, run, scan, table, tree, udf

HOOKS = [f.name for f in dataclasses.fields(OperatorKind)]


@pytest.mark.parametrize("kind", all_kinds(), ids=lambda k: k.name)
def test_every_kind_declares_every_hook(kind: OperatorKind) -> None:
    for hook in HOOKS:
        value = getattr(kind, hook)
        assert value is not None, f"{kind.name} lacks {hook}"
    callables = [h for h in HOOKS if h not in ("name", "node_type", "ops", "wire_keys", "default_k")]
    for hook in callables:
        value = getattr(kind, hook)
        if hook == "output_fields" and value == SAME_AS_INPUT:
            continue
        if isinstance(value, bool) or (hook == "label" and isinstance(value, str) and value):
            continue
        assert callable(value), f"{kind.name}.{hook} is not callable"
    assert kind.ops and all(kind_for_op(op) is kind for op in kind.ops)
    assert "input" in kind.wire_keys or "inputs" in kind.wire_keys or kind.name in ("scan", "join")


def test_a_kind_missing_a_hook_cannot_be_built() -> None:
    declared = {f.name: getattr(all_kinds()[0], f.name) for f in dataclasses.fields(OperatorKind)}
    del declared["estimate"]
    with pytest.raises(TypeError, match="estimate"):
        OperatorKind(**declared)


def test_every_plan_node_class_has_a_kind_and_a_cost_constant() -> None:
    node_classes = typing.get_args(costmodel.plan.Node)
    registered = {kind.node_type for kind in all_kinds()}
    assert set(node_classes) <= registered
    costs = default_operator_costs()
    assert all(kind.name in costs for kind in all_kinds())
    assert Options().k("sample") == 1.0


def test_an_unregistered_node_is_an_error_not_a_default() -> None:
    @dataclass(frozen=True)
    class Explode:
        id: str

    with pytest.raises(UnknownKind):
        op_name(Explode("x"))  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        Options().k("explode")


# ---------------------------------------------------------------- the sample kind

T = {"t": table(["a", "b"], rows=10_000, a={"ndv": 100, "min": 1, "max": 100})}


def sample(input: dict, fraction: float, method: str = "bernoulli", seed: int | None = 7) -> dict:
    return {"op": "sample", "fraction": fraction, "method": method, "seed": seed, "input": input}


def test_sample_round_trips_through_the_wire() -> None:
    plan = sample(scan("t", id="s"), 0.25, seed=3) | {"id": "x"}
    wire = plan_to_wire(plan_from_wire(plan, catalog_from_wire({"tables": T})))
    assert wire == {
        "op": "sample",
        "id": "x",
        "fraction": 0.25,
        "method": "bernoulli",
        "seed": 3,
        "input": wire["input"],
    }
    assert kind_of(plan_from_wire(plan, catalog_from_wire({"tables": T}))).name == "sample"


@pytest.mark.parametrize("mode", ["always", "cost"])
def test_no_predicate_passes_below_a_bernoulli_sample(mode: str) -> None:
    """Even a selective, cheap one (1 - r = 0.5 <= p * r1 = 0.99): below the sample it would change which rows a
    seeded sample keeps, so the sample is a barrier with reason ``sample`` in every mode."""
    result = run(filter_(sample(scan("t"), 0.5), c("a") == 5), T, mode=mode)
    assert after(result) == tree("""
        Filter: a = 5
          Sample: fraction=0.5 method=bernoulli seed=7
            TableScan: t
    """)
    assert decision(result, "a = 5", result.original.input.id)["reason"] == "sample"


def test_an_expensive_predicate_below_a_sample_does_not_rise_above_it() -> None:
    """Pulling up is pushing down read backwards: an expensive UDF written under a sample stays under it, even where
    rising past the selective join above would cost less (it does rise out of a plain derived table)."""
    tables = {
        "l": table(["k", "x"], rows=1_000_000, k={"ndv": 1_000_000}),
        "r": table(["k"], rows=10, k={"ndv": 10}),
    }
    expensive = udf("score", c("l.x"), cost=100_000) > 1
    sampled = join(alias(sample(filter_(scan("l"), expensive), 0.5), "q"), scan("r"), c("q.k") == c("r.k"))
    plain = join(alias(filter_(scan("l"), expensive), "q"), scan("r"), c("q.k") == c("r.k"))
    assert after(run(plain, tables)).startswith("Filter: score(q.x) > 1")  # the same plan without the sample
    result = run(sampled, tables)
    assert after(result) == tree("""
        Inner Join: q.k = r.k
          SubqueryAlias: q
            Sample: fraction=0.5 method=bernoulli seed=7
              TableScan: l filters=[score(l.x) > 1]
          TableScan: r
    """)
    assert not [d for d in result.decisions if d["action"] == "pulled_up"]


def test_a_weak_predicate_stays_above_a_small_sample() -> None:
    """1 - r = 0.9 > p * r1 = 0.5: filtering the sample's few rows costs less than filtering them all (the model
    decides a comparison only with ``expensive_threshold`` 0; by default a cheap predicate is placed by rule)."""
    result = run(filter_(sample(scan("t"), 0.1), c("a") > 50), T, expensive_threshold=0)
    assert after(result).startswith("Filter: a > 50\n  Sample")


def test_the_sample_scales_the_estimate() -> None:
    result = run(sample(scan("t"), 0.1), T)
    row = next(r for r in result.after if r.operator == "sample")
    assert row.rows_in == 10_000 and row.rows_out == pytest.approx(1_000)


def test_an_expensive_predicate_stays_above_a_sample() -> None:
    result = run(filter_(sample(scan("t"), 0.01), udf("score", c("a"), cost=10_000) > 1), T)
    assert after(result).startswith("Filter: score(a) > 1\n  Sample")
    assert decision(result, "score(a) > 1", result.original.input.id)["action"] == "blocked"


def test_nothing_passes_below_a_block_sample() -> None:
    result = run(filter_(sample(scan("t"), 0.1, method="system"), c("a") > 50), T, mode="always")
    assert decision(result, "a > 50", result.original.input.id)["reason"] == "block_sample"


def test_bad_sample_fields_name_their_path() -> None:
    with pytest.raises(PlanError) as info:
        optimize_wire(sample(scan("t"), 1.5), {"tables": T})
    assert info.value.path == "$.plan.fraction"
    with pytest.raises(PlanError) as info:
        optimize_wire(sample(scan("t"), 0.5) | {"metod": "system"}, {"tables": T})
    assert info.value.detail["did_you_mean"] == "method"


def test_every_reason_in_the_answer_is_a_reason_member() -> None:
    """Reasons are one enum whose members are their wire strings: the JSON answer carries plain strings."""
    import json

    from costmodel.reasons import Reason

    plan = filter_(sample(scan("t"), 0.1, method="system"), c("a") > 50)
    answer = optimize_wire(plan, {"tables": T}, {"mode": "always"})
    reasons = [d["reason"] for d in answer["decisions"]]
    assert reasons and all(isinstance(r, Reason) for r in reasons)
    assert json.loads(json.dumps(answer))["decisions"][0]["reason"] == "block_sample"
