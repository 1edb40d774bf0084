"""Node ids unique across a whole wire answer, subquery plans included.

A predicate holding a subquery that the optimizer places in several union
branches carries a copy of the subquery's plan into each, ids and all; a
caller reading the answer (or its decisions) by node id would then find two
nodes with one id. The first copy in pre-order keeps its ids (decisions name
those); every later repeat gets a fresh ``fN``.
"""

from __future__ import annotations

from typing import Any

from costmodel.wire.nodes import INPUT_KEYS, node_dicts


def unique_node_ids(plan: Any) -> None:
    """Renumber repeated node ids of a wire plan in place (iteratively; copies shared dicts it renames).

    >>> sub = {"op": "scan", "id": "n3", "table": "v", "filters": []}
    >>> exists = {"subquery": sub, "kind": "exists"}
    >>> plan = {"op": "union", "id": "n1", "inputs": [
    ...     {"op": "filter", "id": "f1", "predicate": exists, "input": {"op": "scan", "id": "n2"}},
    ...     {"op": "filter", "id": "f1", "predicate": exists, "input": {"op": "scan", "id": "n4"}}]}
    >>> unique_node_ids(plan)
    >>> [plan["inputs"][1]["id"], plan["inputs"][1]["predicate"]["subquery"]["id"], sub["id"]]
    ['f2', 'f3', 'n3']
    """
    if not isinstance(plan, dict):
        return
    every = _all_ids(plan)
    taken = set(every)
    if len(taken) == len(every):
        return  # the common case: nothing repeated, nothing to copy
    seen: set[str] = set()
    counter = 0

    def fresh() -> str:
        nonlocal counter
        while True:
            counter += 1
            if f"f{counter}" not in taken:
                taken.add(f"f{counter}")
                return f"f{counter}"

    # (container, key): the node dict lives at container[key]; pre-order, children and subqueries in order
    stack: list[tuple[Any, Any]] = [({"plan": plan}, "plan")]
    while stack:
        container, key = stack.pop()
        node = container[key]
        ident = node.get("id")
        if isinstance(ident, str):
            if ident in seen:
                node = dict(node)  # the repeat may be the same dict object as the first copy
                node["id"] = fresh()
                container[key] = node
            seen.add(node["id"])
        pending: list[tuple[Any, Any]] = []
        for field, value in list(node.items()):
            if field in INPUT_KEYS:
                if field == "inputs" and isinstance(value, list):
                    node[field] = value = list(value)
                    pending.extend((value, i) for i in range(len(value)) if isinstance(value[i], dict))
                elif isinstance(value, dict):
                    pending.append((node, field))
            elif isinstance(value, (dict, list)):
                node[field] = _subquery_slots(value, pending)
        stack.extend(reversed(pending))


def _subquery_slots(value: Any, pending: list[tuple[Any, Any]]) -> Any:
    """``value`` (an expression) with its containers copied, each subquery plan's slot queued in order."""
    if isinstance(value, list):
        return [_subquery_slots(v, pending) for v in value]
    if not isinstance(value, dict):
        return value
    out = dict(value)
    for k, v in value.items():
        if k == "subquery" and isinstance(v, dict):
            pending.append((out, k))
        elif isinstance(v, (dict, list)):
            out[k] = _subquery_slots(v, pending)
    return out


def _all_ids(plan: dict[str, Any]) -> list[str]:
    """The string ids of every node in ``plan``, subqueries included (a walk that pushes only containers)."""
    found: list[str] = []
    for node in node_dicts(plan):
        ident = node.get("id")
        if isinstance(ident, str):
            found.append(ident)
    return found
