"""Reading, binding and writing the wire format; errors name the JSON path."""

import pytest

from costmodel import PlanError, catalog_from_wire, optimize_wire, plan_from_wire, plan_to_wire
from costmodel.plan import output_fields
from costmodel.wire import read
from tests.costmodel.dsl import alias, c, filter_, join, project, scan, table, union

CAT = catalog_from_wire({"tables": {"t": table(["a", "b"]), "u": table(["a", "c"])}})


def error(plan, catalog=CAT) -> PlanError:
    with pytest.raises(PlanError) as info:
        plan_from_wire(plan, catalog)
    return info.value


def test_round_trip_keeps_ids_and_names():
    plan = filter_(join(scan("t", id="s1"), scan("u", id="s2"), c("t.a") == c("u.a"), id="j"), c("b") > 1, id="f")
    wire = plan_to_wire(plan_from_wire(plan, CAT))
    assert wire["id"] == "f" and wire["input"]["id"] == "j"
    assert wire["predicate"] == {"fn": ">", "args": [{"col": "b"}, {"lit": 1, "type": "int"}]}


def test_missing_ids_are_assigned_in_pre_order_without_collisions():
    plan = filter_(project(scan("t", id="n1"), a=c("a")), c("a") > 1)
    node = plan_from_wire(plan, CAT)
    assert node.id == "n2" and node.input.id == "n3" and node.input.input.id == "n1"


def test_unknown_column_names_what_exists():
    err = error(filter_(scan("t"), c("zzz") > 1))
    assert err.code == "unknown_column" and err.path == "$.plan.predicate.args[0].col"
    assert err.detail["available"] == ["t.a", "t.b"]


def test_ambiguous_column():
    err = error(filter_(join(scan("t"), scan("u"), c("t.a") == c("u.a")), c("a") > 1))
    assert err.code == "ambiguous_column" and err.detail["candidates"] == ["t.a", "u.a"]


def test_unknown_op_and_table_and_bad_types():
    assert error({"op": "explode"}).path == "$.plan.op"
    assert error(scan("nope")).code == "unknown_table"
    assert error({"op": "limit", "count": "ten", "input": scan("t")}).path == "$.plan.count"
    assert error(filter_(scan("t"), {"fn": "=", "args": [{"col": "a"}]})).code == "invalid_arity"
    assert error({"op": "filter", "input": scan("t")}).path == "$.plan.predicate"


def test_duplicate_ids_are_refused():
    assert error(join(scan("t", id="x"), scan("u", id="x"), c("t.a") == c("u.a"))).code == "duplicate_id"


def test_self_join_columns_resolve_by_identity():
    plan = plan_from_wire(join(scan("t", "l"), scan("t", "r"), c("l.a") == c("r.a")), CAT)
    left, right = output_fields(plan.left), output_fields(plan.right)
    assert {f.cid for f in left}.isdisjoint({f.cid for f in right})


def test_re_aliased_names_resolve():
    plan = plan_from_wire(filter_(alias(project(scan("t"), x=c("a")), "q"), c("q.x") > 1), CAT)
    assert plan.predicate.args[0].cid == output_fields(plan.input)[0].cid


def test_union_output_takes_first_branch_names():
    plan = plan_from_wire(union(scan("t"), scan("u")), CAT)
    assert [f.name for f in output_fields(plan)] == ["a", "b"]


def test_union_arity_mismatch():
    bad = union(scan("t"), project(scan("u"), a=c("a")))
    assert error(bad).code == "column_count_mismatch"


def test_plans_deeper_than_the_limit_are_refused_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "MAX_DEPTH", 50)
    plan = scan("t")
    for _ in range(60):
        plan = filter_(plan, c("a") > 1)
    err = error(plan)
    assert err.code == "too_deep" and err.path.startswith("$.plan" + ".input" * 50)


def test_plan_900_levels_deep_is_optimized():
    plan = scan("t")
    for i in range(900):
        plan = filter_(plan, c("a") > i)
    result = optimize_wire(plan, {"tables": {"t": table(["a", "b"], rows=100)}})
    assert result["plan"]["op"] == "scan" and len(result["plan"]["filters"]) == 900


def test_correlated_subquery_binds_outer_columns():
    sub = filter_(scan("u"), c("u.a") == c("t.a"))
    plan = plan_from_wire(filter_(scan("t"), {"subquery": sub, "kind": "exists"}), CAT)
    (outer_cid,) = plan.predicate.outer_refs
    assert outer_cid == output_fields(plan.input)[0].cid
