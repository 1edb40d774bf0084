"""The wire walks the SQL adapter and the Spark target run on every request (``costmodel.wire.nodes``), against
recursive definitions of what they return, on TPC-H's plans and on random JSON."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from costmodel.wire.nodes import column_refs, node_ids, nodes_in_order, numbered

PLANS = sorted((Path(__file__).parents[2] / "bench" / "tpch" / "plans").glob("q*.json"))
INPUTS = ("input", "left", "right", "inputs")


def refs_by_recursion(value: Any, out: dict[str, list[str]]) -> dict[str, list[str]]:
    """What ``column_refs`` returns, by its definition: a depth-first walk in key order."""
    if isinstance(value, dict):
        col = value.get("col")
        if isinstance(col, str) and "." in col:
            qual, name = col.rsplit(".", 1)
            names = out.setdefault(qual.lower(), [])
            if name not in names:
                names.append(name)
        for inner in value.values():
            refs_by_recursion(inner, out)
    elif isinstance(value, list):
        for inner in value:
            refs_by_recursion(inner, out)
    return out


def node_objects(value: object) -> Iterator[dict[str, Any]]:
    """Every node object (a dict with an ``op``) in ``value``, by definition: a recursive walk in key order."""
    if isinstance(value, dict):
        if "op" in value:
            yield value
        for inner in value.values():
            yield from node_objects(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from node_objects(inner)


def numbered_by_recursion(node: dict[str, Any], counter: list[int]) -> dict[str, Any]:
    """What ``numbered`` returns, by its definition: the node, the subqueries of its expressions, its inputs."""
    counter[0] += 1
    out: dict[str, Any] = {"op": node["op"], "id": f"n{counter[0]}"}
    for key, value in node.items():
        if key not in ("op", "id", *INPUTS):
            out[key] = _expression(value, counter)
    for key in INPUTS:
        if key in node:
            value = node[key]
            out[key] = (
                [numbered_by_recursion(v, counter) for v in value]
                if key == "inputs"
                else numbered_by_recursion(value, counter)
            )
    return out


def _expression(value: Any, counter: list[int]) -> Any:
    if isinstance(value, list):
        return [_expression(v, counter) for v in value]
    if not isinstance(value, dict):
        return value
    if "subquery" in value:
        out = dict(value)
        out["subquery"] = numbered_by_recursion(value["subquery"], counter)
        if "args" in out:
            out["args"] = _expression(out["args"], counter)
        return out
    return {k: _expression(v, counter) for k, v in value.items()}


def random_expression(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth <= 0 or roll < 0.3:
        return rng.choice(
            [{"col": rng.choice(["T.a", "t.b", "u.A", "a", "x.y.z", "t.a"])}, {"lit": 1}, {"col": 5}, "s", None]
        )
    if roll < 0.4:
        return {"subquery": random_plan(rng, depth - 1), "kind": "in", "args": [random_expression(rng, 0)]}
    return {"fn": "and", "args": [random_expression(rng, depth - 1) for _ in range(rng.randint(0, 3))]}


def random_plan(rng: random.Random, depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"op": rng.choice(["scan", "filter", "join", "union"]), "id": "old"}
    node["predicate"] = random_expression(rng, depth)
    if depth > 0 and node["op"] == "filter":
        node["input"] = random_plan(rng, depth - 1)
    elif depth > 0 and node["op"] == "join":
        node["left"], node["right"] = random_plan(rng, depth - 1), random_plan(rng, depth - 1)
    elif depth > 0 and node["op"] == "union":
        node["inputs"] = [random_plan(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return node


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_walks_match_their_definitions_on_tpch(path: Path) -> None:
    plan = json.loads(path.read_text())
    assert column_refs(plan) == refs_by_recursion(plan, {})
    assert numbered(plan) == numbered_by_recursion(plan, [0])
    assert _same_objects(nodes_in_order(plan), list(node_objects(plan)))


def test_walks_match_their_definitions_on_random_plans() -> None:
    rng = random.Random(7)
    for _ in range(300):
        plan = random_plan(rng, rng.randint(0, 5))
        refs = column_refs(plan)
        assert refs == refs_by_recursion(plan, {})
        assert list(refs) == list(refs_by_recursion(plan, {}))  # the same order of qualifiers
        assert json.dumps(numbered(plan)) == json.dumps(numbered_by_recursion(plan, [0]))  # key order too
        nodes = list(node_objects(plan))
        assert _same_objects(nodes_in_order(plan), nodes)
        assert node_ids(plan) == {str(n["id"]) for n in nodes if "id" in n}


def _same_objects(found: list[Any], expected: list[Any]) -> bool:
    """The same objects in the same order (a node compared by value could be another node equal to it)."""
    return len(found) == len(expected) and all(a is b for a, b in zip(found, expected, strict=True))


def test_numbered_copies_and_leaves_the_plan_alone() -> None:
    scan = {"op": "scan", "id": "s", "table": "t", "filters": [{"col": "t.a"}]}
    inner = {"op": "scan", "table": "u"}
    plan = {"op": "join", "left": scan, "right": scan, "on": {"fn": "not", "args": [{"subquery": inner}]}}
    out = numbered(plan)
    assert [out["id"], out["on"]["args"][0]["subquery"]["id"], out["left"]["id"], out["right"]["id"]] == [
        "n1",
        "n2",
        "n3",
        "n4",
    ]
    assert out["left"] is not out["right"]  # a node met twice is two nodes
    # an expression without a subquery is shared (the engine reads it and changes nothing); the way to a
    # subquery is copied, so the plan keeps its own
    assert out["left"]["filters"] is scan["filters"]
    assert out["on"] is not plan["on"] and plan["on"]["args"][0]["subquery"] is inner and "id" not in inner
    assert scan["filters"] == [{"col": "t.a"}] and scan["id"] == "s" and "id" not in plan
