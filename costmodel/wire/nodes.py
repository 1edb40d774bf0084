"""The node objects of a wire plan, found without reading it: compiled with the engine, because the service
looks through every request's plan (subqueries included) for what the answer warns about."""

from __future__ import annotations

from typing import Any


def node_dicts(value: Any) -> list[dict[str, Any]]:
    """Every node object (a dict with an ``op``) in ``value``, subqueries included, walked without recursion;
    only dicts and lists are pushed, so the strings and numbers that make up most of a plan cost one type check.

    >>> plan = {"op": "filter", "predicate": {"subquery": {"op": "scan"}}, "input": {"op": "join", "inputs": []}}
    >>> [node["op"] for node in node_dicts(plan)]
    ['filter', 'join', 'scan']
    """
    out: list[dict[str, Any]] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        inner: Any
        if type(item) is dict:
            if "op" in item:
                out.append(item)
            inner = item.values()
        elif type(item) is list:
            inner = item
        else:
            continue
        for child in inner:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append(child)
    return out
