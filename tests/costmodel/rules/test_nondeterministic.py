"""Non-deterministic predicates never move below joins, aggregates, windows, set operations or into scans."""

import pytest

from tests.costmodel.dsl import (
    after,
    aggregate,
    c,
    decision,
    distinct,
    f,
    filter_,
    join,
    run,
    scan,
    table,
    udf,
    union,
    window,
)

T = {"t": table(["a", "b"], rows=1000), "u": table(["c", "d"], rows=1000)}

INPUTS = {
    "join": lambda: join(scan("t"), scan("u"), c("t.a") == c("u.c")),
    "aggregate": lambda: aggregate(scan("t"), [c("a")], n=f("count")),
    "window": lambda: window(scan("t"), [c("a")], [c("b")], r=f("rank")),
    "union": lambda: union(scan("t"), scan("u")),
    "distinct": lambda: distinct(scan("t")),
    "scan": lambda: scan("t"),
}


@pytest.mark.parametrize("kind", sorted(INPUTS))
@pytest.mark.parametrize(
    "make_predicate",
    [
        lambda: f("rand") < 0.5,
        lambda: udf("coin", c("a"), cost=5, deterministic=False) > 0,
    ],
)
def test_nondeterministic_predicate_stays_where_it_was(kind, make_predicate):
    node = INPUTS[kind]()
    plan = filter_(node, make_predicate(), id="top")
    result = run(plan, T, mode="always")
    assert result.plan.id == "top"
    assert after(result).splitlines()[0].startswith("Filter:")
    assert [d["reason"] for d in result.decisions if d["action"] == "blocked"] == ["nondeterministic_predicate"]


def test_deterministic_udf_moves_when_it_pays():
    plan = filter_(union(scan("t"), scan("u")), udf("score", c("a"), cost=2) > 0)
    text = after(run(plan, T, mode="always"))
    assert text.count("score(") == 2


def test_decision_names_the_filter_input():
    plan = filter_(scan("t"), f("rand") < 0.5, id="top")
    result = run(plan, T)
    assert decision(result, "rand() < 0.5", "n1")["action"] == "blocked"
