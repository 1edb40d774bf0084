"""Shrink a plan that makes a rewrite change results down to a minimal one, and keep it as a regression.

Shrinking tries simpler variants and keeps any that still fails: a filter
replaced by its input, a conjunction or disjunction cut to one part, a join
condition cut to its keys, a NOT dropped. Variants that no longer bind are
skipped. The result is saved under tests/correctness/regressions/ where
``test_regressions.py`` replays it on every run.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from costmodel import PlanError, catalog_from_wire, plan_from_wire

REGRESSIONS = Path(__file__).parent / "regressions"

Plan = dict[str, Any]


def _paths(node: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(node, dict):
        yield path
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*path, i))


def _get(node: Any, path: tuple) -> Any:
    for step in path:
        node = node[step]
    return node


def _replace(plan: Plan, path: tuple, value: Any) -> Plan:
    if not path:
        return copy.deepcopy(value)
    out = copy.deepcopy(plan)
    parent = _get(out, path[:-1])
    parent[path[-1]] = copy.deepcopy(value)
    return out


def variants(plan: Plan) -> Iterator[Plan]:
    """Simpler plans, smallest change first."""
    for path in _paths(plan):
        node = _get(plan, path)
        if not isinstance(node, dict):
            continue
        if node.get("op") == "filter":
            yield _replace(plan, path, node["input"])
        if node.get("fn") in ("and", "or"):
            for part in node["args"]:
                yield _replace(plan, path, part)
        if node.get("fn") == "not":
            yield _replace(plan, path, node["args"][0])
        if node.get("op") in ("distinct", "limit"):
            yield _replace(plan, path, node["input"])
        if node.get("op") == "join" and node.get("type") != "inner":
            yield _replace(plan, path, {**node, "type": "inner"})


def binds(plan: Plan, catalog: dict[str, Any]) -> bool:
    try:
        plan_from_wire(plan, catalog_from_wire(catalog))
    except PlanError:
        return False
    return True


def shrink(plan: Plan, catalog: dict[str, Any], fails: Callable[[Plan], bool], budget: int = 500) -> Plan:
    """The smallest variant of ``plan`` for which ``fails`` still holds (greedy, bounded)."""
    current = plan
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for candidate in variants(current):
            tries += 1
            if tries >= budget:
                break
            if binds(candidate, catalog) and fails(candidate):
                current = candidate
                improved = True
                break
    return current


def save_regression(plan: Plan, world: dict[str, Any], note: str) -> Path:
    """Keep a failing plan, with the data it failed on, for test_regressions.py to replay."""
    body = json.dumps({"plan": plan, "world": world, "note": note}, sort_keys=True, indent=2)
    REGRESSIONS.mkdir(exist_ok=True)
    path = REGRESSIONS / f"{hashlib.sha1(body.encode()).hexdigest()[:12]}.json"
    path.write_text(body + "\n")
    return path
