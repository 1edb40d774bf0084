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

from functools import partial
from typing import Any

from costmodel.expr import Column, Expr, Literal, Subquery
from costmodel.kinds.registry import kind_of
from costmodel.plan import NamedExpr, Node, SortKey, children, plan_memo
from costmodel.wire.names import Namer


def expr_to_wire(expr: Expr, namer: Namer) -> dict[str, Any]:
    """``expr`` on the wire, built top-down with an explicit stack (an expression may nest 10,000 levels)."""
    root: list[dict[str, Any]] = []
    stack: list[tuple[Expr, list[dict[str, Any]]]] = [(expr, root)]
    while stack:
        node, into = stack.pop()
        if isinstance(node, Column):
            into.append({"col": namer(node)})
            continue
        if isinstance(node, Literal):
            into.append({"lit": node.value, "type": node.type})
            continue
        args: list[dict[str, Any]] = []
        if isinstance(node, Subquery):
            out: dict[str, Any] = {"subquery": plan_to_wire(node.plan), "kind": node.kind}
            if node.args:
                out["args"] = args
        else:
            out = {"fn": node.fn, "args": args}
            if node.distinct:
                out["distinct"] = True
            if node.fn == "cast":
                out["type"] = node.type
            if node.fn == "udf":
                out["name"] = node.name
                if node.cost is not None:
                    out["cost"] = node.cost
                out["deterministic"] = node.deterministic
        into.append(out)
        for arg in reversed(node.args):
            stack.append((arg, args))
    return root[0]


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
    """Write a plan in the wire format; columns are spelled to resolve where they stand.

    Children are written before their parents with an explicit stack (a plan may nest 10,000 levels); a
    kind's ``write`` then gets each child's wire form back from ``write_child``.
    """
    with plan_memo():
        return _plan_to_wire(node)


def _plan_to_wire(node: Node) -> dict[str, Any]:
    written: dict[int, dict[str, Any]] = {}
    write_child = partial(_written, written)
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        current, ready = stack.pop()
        if not ready:
            stack.append((current, True))
            for kid in reversed(children(current)):
                stack.append((kid, False))
            continue
        kind = kind_of(current)
        written[id(current)] = kind.write(current, Namer.for_node(current), write_child)
    return written[id(node)]


def _written(written: dict[int, dict[str, Any]], child: Node) -> dict[str, Any]:
    """``child``'s wire form, written before its parent (``_plan_to_wire``)."""
    return written[id(child)]
