"""A function's sampled selectivity (``functions.<name>.selectivity``, a runner's measurement on a sample) is the
estimate of a conjunct calling it, behind statistics and feedback: it decides how many rows a join keeps, and so
whether an expensive conjunct on the other side pays to hold above that join."""

from __future__ import annotations

from typing import Any

import pytest

from costmodel import PlanError, options_from_wire
from costmodel.estimate import ColumnInfo, SelectivityEstimate
from costmodel.estimate_functions import FunctionSampleSource
from costmodel.expr import Call, Column, Expr
from costmodel.functions import FunctionDecl
from tests.costmodel.dsl import after, and_, c, f, filter_, join, run, scan, table

T = {
    "o": table(["k", "x"], rows=100_000, k={"ndv": 1000}),
    "cu": table(["k", "y"], rows=1000, k={"ndv": 1000}),
}
#: ``active`` filters the dimension, ``check`` (dear) the fact: held above the join only if the join drops orders
QUERY = filter_(join(scan("o"), scan("cu"), c("o.k") == c("cu.k")), and_(f("active", c("cu.y")), f("check", c("o.x"))))
CHECK = {"cost": 20_000}


def functions(**active: Any) -> dict[str, Any]:
    return {"active": {"cost": 8_000, **active}, "check": CHECK}


def test_a_sample_keeping_every_row_puts_the_dear_conjunct_below_the_join() -> None:
    result = run(QUERY, T, functions=functions(selectivity=1.0, sample_rows=200))
    assert "TableScan: o filters=[check(o.x)]" in after(result)
    estimate = next(e for e in result.estimates if e["predicate"] == "active(cu.y)")
    assert estimate["source"] == "function sample" and estimate["selectivity"] == 1.0


def test_a_sample_keeping_few_rows_holds_it_above() -> None:
    result = run(QUERY, T, functions=functions(selectivity=0.02, sample_rows=200))
    assert after(result).startswith("Filter: check(o.x)\n  Inner Join")


def test_without_a_sample_the_default_holds() -> None:
    result = run(QUERY, T, functions=functions())
    estimate = next(e for e in result.estimates if e["predicate"] == "active(cu.y)")
    assert estimate["source"] == "default" and estimate["selectivity"] == 0.5


def test_a_source_in_front_answers_before_the_sample() -> None:
    """What a run observed (``FeedbackSource``, first in the service's chain) wins over the sample."""

    class Observed:
        name = "feedback"

        def estimate(self, predicate: Expr, columns: Any) -> SelectivityEstimate | None:
            found = isinstance(predicate, Call) and predicate.fn == "active"
            return SelectivityEstimate(0.02, 0.01, 0.03, self.name) if found else None

    from costmodel import catalog_from_wire, optimize, plan_from_wire

    catalog = catalog_from_wire({"tables": T})
    options = options_from_wire({"functions": functions(selectivity=1.0, sample_rows=200)})
    plan = plan_from_wire(QUERY, catalog, functions=options.functions)
    result = optimize(plan, catalog, options, (Observed(),))
    assert after(result).startswith("Filter: check(o.x)\n  Inner Join")


def test_the_interval_is_the_samples() -> None:
    source = FunctionSampleSource({"f": FunctionDecl(cost=1.0, selectivity=0.0, sample_rows=50)})
    columns: dict[int, ColumnInfo] = {}
    found = source.estimate(Call("udf", (Column("a", 1),), name="F"), columns)
    assert found is not None and found.selectivity == 0.0 and found.low == 0.0 and 0.05 < found.high < 0.1


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        ({"selectivity": 1.5}, "$.options.functions.f.selectivity"),
        ({"selectivity": True}, "$.options.functions.f.selectivity"),
        ({"sample_rows": 0}, "$.options.functions.f.sample_rows"),
        ({"sample_rows": 2.5}, "$.options.functions.f.sample_rows"),
    ],
)
def test_bad_sampled_selectivities_name_their_path(entry: dict[str, Any], path: str) -> None:
    with pytest.raises(PlanError) as info:
        options_from_wire({"functions": {"f": {"cost": 5, **entry}}})
    assert info.value.path == path
