"""Writing a plan in the wire format; every field the reader reads comes back out.

Each operator kind writes its own fields (its ``write`` hook); expressions,
named expressions and sort keys are written here.

Example::

    >>> from costmodel.catalog import catalog_from_wire
    >>> from costmodel.wire.read import plan_from_wire
    >>> cat = catalog_from_wire({"tables": {"t": {"columns": ["a", "b"]}}})
    >>> plan = plan_from_wire({"op": "filter", "predicate": {"fn": ">", "args": [
    ...     {"col": "a"}, {"lit": 1}]}, "input": {"op": "scan", "table": "t"}}, cat)
    >>> plan_to_wire(plan)["predicate"]
    {'fn': '>', 'args': [{'col': 'a'}, {'lit': 1, 'type': 'int'}]}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from costmodel.expr import Column, Expr, Literal, Subquery
from costmodel.kinds.registry import kind_of
from costmodel.plan import NamedExpr, Node, SortKey
from costmodel.wire.names import Namer


def expr_to_wire(expr: Expr, namer: Callable[[Column], str]) -> dict[str, Any]:
    if isinstance(expr, Column):
        return {"col": namer(expr)}
    if isinstance(expr, Literal):
        return {"lit": expr.value, "type": expr.type}
    if isinstance(expr, Subquery):
        out: dict[str, Any] = {"subquery": plan_to_wire(expr.plan), "kind": expr.kind}
        if expr.args:
            out["args"] = [expr_to_wire(a, namer) for a in expr.args]
        return out
    out = {"fn": expr.fn, "args": [expr_to_wire(a, namer) for a in expr.args]}
    if expr.distinct:
        out["distinct"] = True
    if expr.fn == "cast":
        out["type"] = expr.type
    if expr.fn == "udf":
        out["name"] = expr.name
        if expr.cost is not None:
            out["cost"] = expr.cost
        out["deterministic"] = expr.deterministic
    return out


def named_to_wire(named: NamedExpr, namer: Namer) -> dict[str, Any]:
    return {"expr": expr_to_wire(named.expr, namer), "as": named.name}


def keys_to_wire(keys: tuple[SortKey, ...], namer: Namer) -> list[dict[str, Any]]:
    out = []
    for key in keys:
        item: dict[str, Any] = {"expr": expr_to_wire(key.expr, namer), "desc": key.desc}
        if key.nulls_first is not None:
            item["nulls_first"] = key.nulls_first
        out.append(item)
    return out


def plan_to_wire(node: Node) -> dict[str, Any]:
    """Write a plan in the wire format; columns are spelled to resolve where they stand."""
    kind = kind_of(node)
    return kind.write(node, Namer(kind.scope(node)), plan_to_wire)
