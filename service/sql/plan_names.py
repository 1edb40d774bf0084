"""The column names a plan node built from SQL makes visible to the node above it.

Why: a window's outputs sit beside its input's columns, so a window function named like an input column
(``SELECT a.w AS c, count(*) OVER () AS w FROM (SELECT x AS w FROM t) a``) would make the plain name ``w``
ambiguous to the project above; the builder gives such a function an internal name instead.
Names are lower case (Spark's and the engine's lookups ignore case); ``None`` means unknown (a table the
catalog does not describe), and every wire op has a rule here (``_rule`` matches them exhaustively: a new one is a
type error until it has one, never a default).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never, get_args

from costmodel.kinds.registry import WireOp
from service.sql.parse import Tables
from service.sql.plan_expr import Node

Names = frozenset[str] | None


def _last(col: str) -> str:
    return col.rsplit(".", 1)[-1].lower()


def _named(items: list[dict[str, object]]) -> frozenset[str]:
    """Names of ``{"expr", "as"}`` items and of plain ``{"col"}`` keys."""
    out = set()
    for item in items:
        name = item.get("as") if "as" in item else item.get("col")
        if isinstance(name, str):
            out.add(_last(name) if "as" not in item else name.lower())
    return frozenset(out)


def _union(*parts: Names) -> Names:
    if any(p is None for p in parts):
        return None
    return frozenset().union(*(p for p in parts if p is not None))


def _scan(n: Node, tables: Tables) -> Names:
    hit = tables.by_lower.get(str(n["table"]).lower()) if tables.known else None
    return frozenset(c.lower() for c, _ in hit[1]) if hit else None


def _alias(n: Node, tables: Tables) -> Names:
    if n.get("columns"):
        return frozenset(c.lower() for c in n["columns"])
    return visible_names(n["input"], tables)


def _join(n: Node, tables: Tables) -> Names:
    left = visible_names(n["left"], tables)
    if n["type"] in ("semi", "anti"):
        return left
    return _union(left, visible_names(n["right"], tables))


def _passes_input(n: Node, tables: Tables) -> Names:
    return visible_names(n["input"], tables)


def _setop(n: Node, tables: Tables) -> Names:
    return visible_names(n["inputs"][0], tables)  # the first branch names a set operation's columns


def _rule(op: WireOp) -> Callable[[Node, Tables], Names]:
    """The rule of ``op``: exhaustive over the wire ops, so a new kind is a type error here until it has one."""
    match op:
        case "scan":
            return _scan
        case "alias":
            return _alias
        case "join":
            return _join
        case "filter" | "sort" | "limit" | "distinct" | "sample":
            return _passes_input
        case "project":
            return lambda n, t: _named(n["exprs"])
        case "aggregate":
            return lambda n, t: _named([*n["group_by"], *n["aggregates"]])
        case "window":
            return lambda n, t: _union(visible_names(n["input"], t), _named(n["functions"]))
        case "generate":
            return lambda n, t: _union(visible_names(n["input"], t), frozenset(c.lower() for c in n["columns"]))
        case "union" | "intersect" | "except":
            return _setop
        case _:
            assert_never(op)


RULES: dict[str, Callable[[Node, Tables], Names]] = {op: _rule(op) for op in get_args(WireOp)}


def visible_names(node: Node, tables: Tables) -> Names:
    """Lower-case names ``node``'s parent can read unqualified, or None when a table's columns are unknown.

    >>> visible_names({"op": "project", "exprs": [{"expr": {"col": "t.x"}, "as": "W"}]}, Tables(None))
    frozenset({'w'})
    """
    return RULES[node["op"]](node, tables)
