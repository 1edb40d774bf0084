"""Column spellings in the answer: the shortcut for a column named apart in its whole tree (``TreeNames``) spells
every column exactly as the scope's own index does, and rests on a property of every operator kind: a node's
scope is made of its inputs' outputs (a leaf's: its own columns)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from costmodel import catalog_from_wire, optimize, plan_from_wire
from costmodel.expr import Column, Subquery, walk
from costmodel.kinds import all_kinds, kind_of
from costmodel.plan import Node, children, node_expressions, output_fields, plan_memo
from costmodel.wire.names import Namer, tree_names
from tests.correctness.plangen import TABLES, PlanGenerator, catalog, make_rows

TPCH = Path(__file__).parents[2] / "bench" / "tpch"
#: the two kinds the differential generator does not make (their tables have no array column, and it samples none)
OTHERS = {
    "tables": {
        "t": {"columns": [{"name": "a", "type": "int"}, {"name": "arr", "type": "array<int>"}]},
        "u": {"columns": [{"name": "a", "type": "int"}]},
    }
}
SCAN_T = {"op": "scan", "table": "t"}
OTHER_PLANS = [
    {
        "op": "filter",
        "predicate": {"fn": ">", "args": [{"col": "x.v"}, {"col": "t.a"}]},
        "input": {
            "op": "generate",
            "generator": {"fn": "explode", "args": [{"col": "t.arr"}]},
            "outer": False,
            "alias": "x",
            "columns": ["v"],
            "input": SCAN_T,
        },
    },
    {
        "op": "join",
        "type": "inner",
        "on": {"fn": "=", "args": [{"col": "q.b"}, {"col": "u.a"}]},
        "left": {
            "op": "alias",
            "name": "q",
            "columns": ["b", "arr"],  # renames t.a: one cid, two spellings
            "input": {"op": "sample", "fraction": 0.5, "method": "bernoulli", "seed": 1, "input": SCAN_T},
        },
        "right": {"op": "scan", "table": "u"},
    },
]


def trees() -> Iterator[Node]:
    """The plans as read and as optimized: generated ones, TPC-H's and the two above."""
    rng = random.Random(3)
    generated = catalog_from_wire(catalog({name: make_rows(rng, name, 5) for name in TABLES}))
    tpch = catalog_from_wire(json.loads((TPCH / "catalog.json").read_text()))
    cases = [(PlanGenerator(random.Random(seed)).query(), generated) for seed in range(150)]
    cases += [(json.loads(p.read_text()), tpch) for p in sorted((TPCH / "plans").glob("q*.json"))]
    cases += [(plan, catalog_from_wire(OTHERS)) for plan in OTHER_PLANS]
    for wire, cat in cases:
        plan = plan_from_wire(wire, cat)
        yield plan
        yield optimize(plan, cat).plan


def nodes(root: Node) -> Iterator[Node]:
    """Every node of the tree, subquery plans included."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))
        for expr in node_expressions(node):
            stack.extend(sub.plan for sub in walk(expr) if isinstance(sub, Subquery))


@pytest.fixture(scope="module")
def plans() -> list[Node]:
    return list(trees())


def test_every_kind_is_met(plans: list[Node]) -> None:
    met = {kind_of(node).name for plan in plans for node in nodes(plan)}
    assert met == {kind.name for kind in all_kinds()}


def test_a_scope_is_made_of_the_inputs_outputs(plans: list[Node]) -> None:
    for plan in plans:
        for node in nodes(plan):
            kids = children(node)
            if kids:
                given = {f for kid in kids for f in output_fields(kid)}
                missing = [f for f in kind_of(node).scope(node) if f not in given]
                assert not missing, f"{kind_of(node).name} {node.id}'s scope holds columns no input gives: {missing}"


def test_the_shortcut_spells_every_column_as_the_scope_does(plans: list[Node]) -> None:
    shortcuts = 0
    for plan in plans:
        with plan_memo():
            names = tree_names(plan)
            every = {f for node in nodes(plan) for f in (*output_fields(node), *kind_of(node).scope(node))}
            # each column of the tree in every spelling it has, and the columns the expressions spell
            columns = {Column(f.name, f.cid) for f in every} | {
                Column(f"{f.qualifier}.{f.name}", f.cid) for f in every if f.qualifier
            }
            for node in nodes(plan):
                written = {c for e in node_expressions(node) for c in walk(e) if isinstance(c, Column)}
                scoped, shortcut = Namer(node), Namer(node, None, names)
                for col in columns | written:
                    assert shortcut(col) == scoped(col), (kind_of(node).name, node.id, col)
                    shortcuts += names.plain(col)
    assert shortcuts > 0
