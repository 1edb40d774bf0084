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
from costmodel.expr import Expr, conjuncts, to_sql
from costmodel.plan import (
    Aggregate,
    Alias,
    Distinct,
    Filter,
    Join,
    Limit,
    NamedExpr,
    Node,
    Project,
    Scan,
    SetOp,
    Sort,
    SortKey,
    Window,
    children,
    output_fields,
)
from costmodel.wire import _Namer


def _named(items: tuple[NamedExpr, ...], namer: _Namer) -> str:
    out = []
    for item in items:
        text = to_sql(item.expr, namer)
        if item.frame is not None:
            text += f" {item.frame.sql()}"
        base = text.rpartition(".")[2]
        out.append(text if base == item.name else f"{text} AS {item.name}")
    return ", ".join(out)


def _keys(keys: tuple[SortKey, ...], namer: _Namer) -> str:
    out = []
    for key in keys:
        text = to_sql(key.expr, namer) + (" DESC" if key.desc else " ASC")
        if key.nulls_first is not None:
            text += " NULLS FIRST" if key.nulls_first else " NULLS LAST"
        out.append(text)
    return ", ".join(out)


def _exprs(items: tuple[Expr, ...] | list[Expr], namer: _Namer) -> str:
    return ", ".join(to_sql(e, namer) for e in items)


def describe(node: Node) -> str:
    """One line for ``node``, without children."""
    if isinstance(node, Scan):
        namer = _Namer(node.fields)
        text = f"TableScan: {node.table}" + (f" AS {node.alias}" if node.alias else "")
        if node.index is not None:
            text = f"Indexed table access on index [{node.table}.{', '.join(node.index.columns)}] " + text
        if node.filters:
            text += f" filters=[{_exprs(node.filters, namer)}]"
        return text
    scope = ()
    for child in children(node)[:2] if isinstance(node, Join) else children(node)[:1]:
        scope = scope + output_fields(child)
    namer = _Namer(scope)
    if isinstance(node, Filter):
        return f"Filter: {to_sql(node.predicate, namer)}"
    if isinstance(node, Project):
        return f"Projection: {_named(node.exprs, namer)}"
    if isinstance(node, Aggregate):
        sets = "" if node.grouping_sets is None else f", groupingSets={[list(g) for g in node.grouping_sets]}"
        return f"Aggregate: groupBy=[{_named(node.group_by, namer)}], aggr=[{_named(node.aggregates, namer)}]{sets}"
    if isinstance(node, Join):
        on = f" {to_sql(node.on, namer)}" if node.on is not None else ""
        aware = " (null-aware)" if node.null_aware else ""
        return f"{node.type.capitalize()} Join{aware}:{on}"
    if isinstance(node, SetOp):
        return f"{node.op.capitalize()}{' All' if node.all else ''}"
    if isinstance(node, Sort):
        limit = f" fetch={node.limit}" if node.limit is not None else ""
        return f"Sort: {_keys(node.keys, namer)}{limit}"
    if isinstance(node, Limit):
        return f"Limit: skip={node.offset}, fetch={node.count if node.count is not None else 'None'}"
    if isinstance(node, Window):
        part = f"partitionBy=[{_exprs(node.partition_by, namer)}]"
        order = f", orderBy=[{_keys(node.order_by, namer)}]" if node.order_by else ""
        return f"Window: {part}{order}, functions=[{_named(node.functions, namer)}]"
    if isinstance(node, Distinct):
        return "Distinct"
    if isinstance(node, Alias):
        return f"SubqueryAlias: {node.name}"
    raise TypeError(f"unknown node {node!r}")


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 or x == int(x) else f"{x:,.2f}"


def _selectivities(node: Node, estimate: Callable[[Expr], Any]) -> str:
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
        stack.extend((child, depth + 1) for child in reversed(children(node)))
    return "\n".join(lines)
