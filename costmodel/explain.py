"""EXPLAIN text trees, indented as DataFusion prints logical plans.

    Projection: c.name AS city_name, s.name AS state_name
      Join: inner c.state_id = s.id
        TableScan: cities AS c filters=[c.name LIKE 'A%']
        TableScan: states AS s filters=[s.name LIKE 'A%']

With costs, each line ends with ``[id rows=... cost=...]``. Tests compare these
trees as text, so a failing test shows the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from costmodel.cost import NodeCost
from costmodel.expr import Expr, conjuncts
from costmodel.kinds.registry import kind_of
from costmodel.plan import Filter, Node, Scan, children
from costmodel.wire.names import Namer


def describe(node: Node) -> str:
    """One line for ``node``, without children (its kind's ``describe``)."""
    kind = kind_of(node)
    return kind.describe(node, Namer.for_node(node))


def _fmt(x: float) -> str:
    """``1,234`` or ``0.25``; below 999 there is no thousands separator to place (placing one is slow)."""
    if abs(x) >= 100 or x == int(x):
        return f"{x:.0f}" if abs(x) < 999 else f"{x:,.0f}"
    return f"{x:.2f}"


def _selectivities(node: Filter | Scan, estimate: Callable[[Expr], Any]) -> str:
    """``sel=0.1 [0.05, 0.2] statistics`` for each predicate a filter or scan applies."""
    predicates = conjuncts(node.predicate) if isinstance(node, Filter) else list(node.filters)
    parts = []
    for predicate in predicates:
        e = estimate(predicate)
        parts.append(f"{e.selectivity:.3g} [{e.low:.3g}, {e.high:.3g}] {e.source}")
    return " sel=" + "; ".join(parts)


def explain(
    plan: Node,
    costs: Mapping[str, NodeCost] | None = None,
    ids: bool = False,
    estimate: Callable[[Expr], Any] | None = None,
) -> str:
    """The plan as an indented text tree; with ``costs``, each line ends with rows and cost, and with
    ``estimate`` every filter also shows each predicate's selectivity, interval and source."""
    lines: list[str] = []
    stack: list[tuple[Node, int]] = [(plan, 0)]
    while stack:
        node, depth = stack.pop()
        line = "  " * depth + describe(node)
        if costs is not None and node.id in costs:
            c = costs[node.id]
            line += f"  [{node.id} rows={_fmt(c.rows_out)} cost={_fmt(c.cost)}"
            if estimate is not None and (isinstance(node, Filter) or (isinstance(node, Scan) and node.filters)):
                line += _selectivities(node, estimate)
            line += "]"
        elif ids:
            line += f"  [{node.id}]"
        lines.append(line)
        for child in reversed(children(node)):
            stack.append((child, depth + 1))
    return "\n".join(lines)
