"""The summary names operators from the plan itself (each kind's ``title``) exactly as from its EXPLAIN tree.

A summary answer does not render the tree before (``costmodel.result.FullParts``), so the names and paths it
shows come from ``tree_operators``; they must be what ``operators`` reads from the tree, for every kind: a kind
no plan below holds fails the coverage check.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from costmodel import catalog_from_wire, plan_from_wire
from costmodel.explain import explain
from costmodel.kinds import all_kinds, kind_of
from costmodel.operator_paths import operators, tree_operators
from costmodel.plan import Node, walk_plan
from service.sql import sql_to_plan
from tests.correctness.plangen import TABLES, PlanGenerator, catalog
from tests.sql.helpers import CATALOG as SQL_CATALOG

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
TPCH_CATALOG = json.loads((TPCH / "catalog.json").read_text())
GENERATED_CATALOG = catalog({name: [] for name in TABLES})

#: kinds no TPC-H or generated plan holds, written out: a generator (outer too), a sample, a deep path
SQL_PLANS = [
    "SELECT t.a, x FROM t LATERAL VIEW OUTER explode(array(t.c)) e AS x WHERE t.a > 1",
    "SELECT t.a, x FROM t LATERAL VIEW explode(array(t.a, t.c)) e AS x WHERE x > 15",
    "SELECT a FROM (SELECT a FROM (SELECT a FROM (SELECT a FROM (SELECT DISTINCT a FROM t) "
    "s1 WHERE a > 1) s2 ORDER BY a LIMIT 9) s3 WHERE a < 5) s4 INTERSECT ALL SELECT a FROM t",
]
#: the SQL adapter reads no TABLESAMPLE: a sample as a wire plan
SAMPLE = {
    "op": "filter",
    "predicate": {"fn": ">", "args": [{"col": "a"}, {"lit": 1}]},
    "input": {"op": "sample", "fraction": 0.5, "method": "bernoulli", "seed": 7, "input": {"op": "scan", "table": "t"}},
}


def plans() -> list[tuple[str, Node]]:
    out: list[tuple[str, Node]] = []
    tpch = catalog_from_wire(TPCH_CATALOG)
    for path in sorted((TPCH / "plans").glob("q*.json")):
        out.append((path.stem, plan_from_wire(json.loads(path.read_text()), tpch)))
    generated = catalog_from_wire(GENERATED_CATALOG)
    for seed in range(150):
        out.append((f"generated-{seed}", plan_from_wire(PlanGenerator(random.Random(seed)).query(), generated)))
    sql_catalog = catalog_from_wire(SQL_CATALOG)
    for n, sql in enumerate(SQL_PLANS):
        out.append((f"sql-{n}", plan_from_wire(sql_to_plan(sql, SQL_CATALOG), sql_catalog)))
    out.append(("sample", plan_from_wire(SAMPLE, sql_catalog)))
    return out


PLANS = plans()


@pytest.mark.parametrize(("name", "plan"), PLANS, ids=[name for name, _ in PLANS])
def test_operators_named_from_the_plan_are_those_its_explain_tree_names(name: str, plan: Node) -> None:
    from_tree = operators(explain(plan, ids=True))
    assert tree_operators(plan) == from_tree
    wanted = set(list(from_tree)[::2])
    assert tree_operators(plan, wanted) == {i: op for i, op in from_tree.items() if i in wanted}


def test_every_kind_is_in_a_plan_above() -> None:
    seen: set[str] = set()
    for _, plan in PLANS:
        seen |= {kind_of(node).name for node in walk_plan(plan)}
    assert seen == {kind.name for kind in all_kinds()}


def test_every_title_is_how_its_explain_line_starts() -> None:
    from costmodel.explain import describe

    titles: dict[str, set[str]] = {}
    for _, plan in PLANS:
        for node in walk_plan(plan):
            title = kind_of(node).title(node)
            line = describe(node)
            scan_title = f"TableScan {line.split(':', 1)[1].split()[0]}" if line.startswith("TableScan:") else None
            assert title == scan_title or line.split(":", 1)[0].strip() == title, (title, line)
            titles.setdefault(kind_of(node).name, set()).add(title)
    assert titles["join"] > {"Inner Join"} and {"Generate", "Generate outer"} <= titles["generate"]
