"""``optimize(baseline=True)``: the cost of the plan rule-based pushdown runs, computed inside the same call.

It must be what a separate call in mode ``always`` reports as its rewritten plan's cost, and asking for it
must change nothing else in the answer.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from costmodel import optimize_wire
from tests.correctness.plangen import TABLES, PlanGenerator, catalog, make_rows

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
TPCH_CATALOG = json.loads((TPCH / "catalog.json").read_text())
GENERATED_CATALOG = catalog({name: make_rows(random.Random(7), name, 30) for name in TABLES})
CASES = [(p.stem, json.loads(p.read_text()), TPCH_CATALOG) for p in sorted((TPCH / "plans").glob("q*.json"))] + [
    (f"generated-{seed}", PlanGenerator(random.Random(seed)).query(), GENERATED_CATALOG) for seed in range(120)
]


def _without_baseline(answer: dict[str, Any]) -> dict[str, Any]:
    cost = {k: v for k, v in answer["cost"].items() if k != "baseline"}
    return {**answer, "cost": cost}


@pytest.mark.parametrize(("name", "plan", "tables"), CASES, ids=[c[0] for c in CASES])
def test_baseline_is_what_always_mode_costs(name: str, plan: dict[str, Any], tables: dict[str, Any]) -> None:
    answer = optimize_wire(plan, tables, None, baseline=True)
    always = optimize_wire(plan, tables, {"mode": "always"})
    assert answer["cost"]["baseline"]["total"] == always["cost"]["after"]["total"]
    assert answer["cost"]["baseline"]["mode"] == "always"
    assert _without_baseline(answer) == optimize_wire(plan, tables)


def test_some_cases_keep_a_predicate_so_the_baseline_is_costed_apart() -> None:
    """Without a kept decision the baseline is the answer's own plan; the cases above must cover both."""
    kept = [
        name
        for name, plan, tables in CASES
        if any(d.get("action") == "kept" for d in optimize_wire(plan, tables)["decisions"])
    ]
    assert {"q16", "q21"} <= set(kept)
    assert 0 < len(kept) < len(CASES)


def test_no_baseline_unless_asked() -> None:
    _, plan, tables = CASES[0]
    assert "baseline" not in optimize_wire(plan, tables)["cost"]


@pytest.mark.parametrize("scan_pushdown", [True, False])
def test_the_baseline_from_the_cost_run_is_the_always_runs_total_exactly(scan_pushdown: bool) -> None:
    """After a run in mode cost the baseline reuses its passes (placement and rewrite done again, every predicate
    as deep as legal); running every pass again in mode always must give the same float, case by case."""
    from costmodel import optimizer
    from costmodel.catalog import catalog_from_wire
    from costmodel.options import options_from_wire
    from costmodel.passes.rewrite import MINTED_IDS
    from costmodel.plan import plan_memo
    from costmodel.wire import plan_from_wire

    options = options_from_wire({"scan_pushdown": scan_pushdown})
    compared = 0
    for _, plan, tables in CASES:
        catalog = catalog_from_wire(tables)
        token = MINTED_IDS.set(set())
        try:
            with plan_memo():
                node = plan_from_wire(plan, catalog)
                decided, _ = optimizer._optimize_subqueries(node, catalog, options, None)
                work, _ = optimizer._run_passes(decided, catalog, options, None)
                shared = optimizer._rule_based_total(work, node, None)
                rerun = optimizer._rule_based_rerun(node, catalog, options, None)
        finally:
            MINTED_IDS.reset(token)
        assert shared == rerun
        compared += 1
    assert compared == len(CASES)
