"""Unknown functions are opaque and stay put (issue 15.6); declared ones are costed and moved (issue 13.2)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from costmodel import PlanError, options_from_wire
from service.optimize import OptimizeService
from service.request import parse_optimize_request
from tests.costmodel.dsl import after, and_, c, decision, f, filter_, join, project, run, scan, table, tree

T = {
    "l": table(["k", "x"], rows=100_000, k={"ndv": 100_000}),
    "r": table(["k", "y"], rows=100, k={"ndv": 100}),
}
JOINED = join(scan("l"), scan("r"), c("l.k") == c("r.k"))


def test_an_unknown_function_stays_where_the_query_put_it_and_says_why() -> None:
    result = run(filter_(JOINED, f("my_udf", c("l.x")) > 1), T, mode="always")
    assert after(result).startswith("Filter: my_udf(l.x) > 1\n  Inner Join")
    entry = decision(result, "my_udf(l.x) > 1", result.original.input.id)
    assert entry["action"] == "blocked" and entry["reason"] == "unknown_function"
    assert "my_udf" in entry["detail"] and "declare it under functions" in entry["detail"]


def test_a_conjunct_after_an_unknown_function_stays_too() -> None:
    result = run(filter_(scan("l"), and_(f("my_udf", c("x")) > 1, c("x") > 5)), T, mode="always")
    assert decision(result, "x > 5", result.original.input.id)["reason"] == "after_nondeterministic_conjunct"
    assert after(result).startswith("Filter: my_udf(x) > 1 AND x > 5")


def test_nothing_passes_below_a_projection_computed_by_an_unknown_function() -> None:
    plan = filter_(project(scan("l"), v={"fn": "my_udf", "args": [{"col": "x"}]}), c("v") > 1)
    result = run(plan, T, mode="always")
    entry = decision(result, "v > 1", result.original.input.id)
    assert entry["reason"] == "unknown_function" and "my_udf" in entry["detail"]


def test_a_known_function_still_moves() -> None:
    result = run(filter_(JOINED, f("upper", c("l.x")) == "A"), T, mode="always")
    assert after(result) == tree("""
        Inner Join: l.k = r.k
          TableScan: l filters=[upper(l.x) = 'A']
          TableScan: r
    """)


def test_a_declared_cheap_function_moves_below_the_join() -> None:
    result = run(filter_(JOINED, f("my_udf", c("l.x")) > 1), T, functions={"my_udf": {"cost": 1}})
    assert "TableScan: l filters=[my_udf(l.x) > 1]" in after(result)


def test_a_declared_expensive_function_stays_above_a_selective_join() -> None:
    result = run(filter_(JOINED, f("score", c("l.x")) > 1), T, functions={"SCORE": {"cost": 100_000}})
    assert after(result).startswith("Filter: score(l.x) > 1\n  Inner Join")
    assert decision(result, "score(l.x) > 1", result.original.input.id)["action"] == "kept"


def test_declared_non_deterministic_and_may_fail_are_honoured() -> None:
    nondet = run(filter_(JOINED, f("coin", c("l.x")) > 1), T, functions={"coin": {"deterministic": False}})
    assert decision(nondet, "coin(l.x) > 1", nondet.original.input.id)["reason"] == "nondeterministic_predicate"
    guarded = filter_(filter_(scan("l"), c("x") != 0), f("inv", c("x")) > 1)
    failing = run(guarded, T, mode="always", functions={"inv": {"may_fail": True}})
    assert after(failing).startswith("Filter: inv(x) > 1")


@pytest.mark.parametrize(
    ("functions", "path"),
    [
        ({"f": {"cots": 1}}, "$.options.functions.f.cots"),
        ({"f": {"cost": -1}}, "$.options.functions.f.cost"),
        ({"f": {"deterministic": "yes"}}, "$.options.functions.f.deterministic"),
        ({"f": 3}, "$.options.functions.f"),
        ({"sum": {"cost": 1}}, "$.options.functions.sum"),
    ],
)
def test_bad_declarations_name_their_path(functions: Any, path: str) -> None:
    with pytest.raises(PlanError) as info:
        options_from_wire({"functions": functions})
    assert info.value.path == path and info.value.code == "invalid_options"


def test_sql_requests_declare_functions_at_the_top_level() -> None:
    catalog = {"tables": {name: {**spec, "columns": spec["columns"]} for name, spec in T.items()}}
    body = {
        "sql": "SELECT l.x, r.y FROM l JOIN r ON l.k = r.k WHERE score(l.x) > 1",
        "catalog": catalog,
        "functions": {"score": {"cost": 100_000, "deterministic": True, "may_fail": False}},
    }
    service = OptimizeService()
    declared = service.optimize(parse_optimize_request(json.dumps(body).encode(), 64))
    entry = next(d for d in declared["decisions"] if d["predicate"] == "score(l.x) > 1")
    assert entry["action"] == "kept" and entry["reason"] == "not_beneficial"
    undeclared = service.optimize(parse_optimize_request(json.dumps({**body, "functions": None}).encode(), 64))
    entry = next(d for d in undeclared["decisions"] if d["predicate"] == "score(l.x) > 1")
    assert entry["reason"] == "unknown_function"


def test_a_pattern_match_over_long_strings_declares_its_cost() -> None:
    """RLIKE is known, but its cost depends on the pattern and the strings: a caller may declare the cost only."""
    regex = f("rlike", c("l.x"), "(quick|slyly)[a-z ]{0,30}(bold|final)")
    cheap = run(filter_(JOINED, regex), T, functions={"rlike": {"cost": 1}})
    assert "TableScan: l filters=[" in after(cheap)
    costly = run(filter_(JOINED, regex), T, functions={"RLIKE": {"cost": 100_000}})
    assert after(costly).startswith("Filter: l.x RLIKE")
    assert (
        decision(costly, after(costly).splitlines()[0].removeprefix("Filter: "), costly.original.input.id)["action"]
        == "kept"
    )
    with pytest.raises(PlanError) as info:
        options_from_wire({"functions": {"rlike": {"cost": 5, "deterministic": False}}})
    assert info.value.path == "$.options.functions.rlike" and "only its cost" in info.value.message
