"""``costmodel.conjunct_texts``: every filter's and join condition's conjuncts, subqueries' plans included, spelled
as the decisions spell predicates (the Spark target finds kept decisions by these texts)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from costmodel import catalog_from_wire, optimize, plan_from_wire
from costmodel.conjunct_texts import conjunct_texts
from costmodel.plan import Join
from costmodel.wire import plan_to_wire
from tests.correctness.plangen import TABLES, PlanGenerator
from tests.correctness.plangen import catalog as plangen_catalog

TPCH = Path(__file__).parents[2] / "bench" / "tpch"
PLANS = sorted((TPCH / "plans").glob("q*.json"))

CATALOG = {
    "tables": {
        "t": {"columns": [{"name": "a", "type": "int"}, {"name": "b", "type": "int"}], "row_count": 100},
        "u": {"columns": [{"name": "c", "type": "int"}, {"name": "d", "type": "int"}], "row_count": 100},
    }
}


def test_filters_joins_and_subqueries_are_all_listed() -> None:
    inner = {
        "op": "filter",
        "id": "sub_filter",
        "predicate": {"fn": ">", "args": [{"col": "u.d"}, {"lit": 3, "type": "int"}]},
        "input": {"op": "scan", "id": "sub_scan", "table": "u"},
    }
    plan = {
        "op": "filter",
        "id": "top",
        "predicate": {
            "fn": "and",
            "args": [
                {"fn": "<", "args": [{"col": "t.a"}, {"lit": 5, "type": "int"}]},
                {
                    "subquery": {
                        "op": "project",
                        "id": "sub",
                        "exprs": [{"expr": {"col": "u.c"}, "as": "c"}],
                        "input": inner,
                    },
                    "kind": "in",
                    "args": [{"col": "t.b"}],
                },
            ],
        },
        "input": {
            "op": "join",
            "id": "j",
            "type": "inner",
            "on": {"fn": "=", "args": [{"col": "t.a"}, {"col": "u.c"}]},
            "left": {"op": "scan", "id": "st", "table": "t"},
            "right": {"op": "scan", "id": "su", "table": "u"},
        },
    }
    texts = conjunct_texts(plan_from_wire(plan, catalog_from_wire(CATALOG)))
    assert set(texts) == {"top", "j", "sub_filter"}
    assert texts["j"] == ["t.a = u.c"] and texts["sub_filter"] == ["u.d > 3"]
    assert texts["top"][0] == "t.a < 5" and len(texts["top"]) == 2 and "subquery" in texts["top"][1]


def test_every_kept_predicate_of_tpch_is_found_where_it_was_kept() -> None:
    """A kept decision's text is one of the conjuncts of a filter or join of the rewritten plan."""
    catalog = catalog_from_wire(json.loads((TPCH / "catalog.json").read_text()))
    found = 0
    for path in PLANS:
        result = optimize(plan_from_wire(json.loads(path.read_text()), catalog), catalog)
        texts = {text for conjuncts in conjunct_texts(result.plan).values() for text in conjuncts}
        kept = [d["predicate"] for d in result.decisions if d.get("action") == "kept" and "predicate" in d]
        assert set(kept) <= texts, path.stem
        found += len(kept)
    assert found > 0  # TPC-H keeps some predicates above operators, so the check checked something


def test_a_plan_that_repeats_an_id_has_no_texts_by_id() -> None:
    """A subquery's plan copied into two places keeps its ids in the engine; the wire answer renumbers them."""
    scan = plan_from_wire({"op": "scan", "id": "s", "table": "t"}, catalog_from_wire(CATALOG))
    assert conjunct_texts(Join("j", "inner", None, scan, scan)) is None


def test_the_engines_texts_are_those_read_back_from_its_wire_answer() -> None:
    """What the Spark target reads from the engine (``FullParts.conjunct_texts``) is what it read before from the
    answer's plan: TPC-H's plans and random ones, wherever no id repeats."""
    catalogs = [(json.loads((TPCH / "catalog.json").read_text()), [json.loads(p.read_text()) for p in PLANS])]
    generator = PlanGenerator(random.Random(11))
    catalogs.append((plangen_catalog({name: [] for name in TABLES}), [generator.query() for _ in range(150)]))
    compared = 0
    for raw_catalog, plans in catalogs:
        catalog = catalog_from_wire(raw_catalog)
        for raw in plans:
            result = optimize(plan_from_wire(raw, catalog), catalog)
            engine = result.full_parts().conjunct_texts()
            if engine is None:
                continue
            wire = plan_to_wire(result.plan)
            assert engine == conjunct_texts(plan_from_wire(wire, catalog)), json.dumps(raw)[:300]
            compared += 1
    assert compared > 150
