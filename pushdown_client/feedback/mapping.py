"""Map Spark's executed operators onto the answer's plan nodes, exactly or not at all.

Each answer node gets Spark's count only when one Spark operator is provably that node:

- a scan: the one Spark scan of its table (by what the scan reads, see ``TableSource``); with filters,
  the Spark ``Filter`` right above it must hold exactly the scan's predicates (Spark's ``isnotnull`` on a column the
  predicates already reject NULLs of is allowed; an ``isnotnull`` on a join key or a predicate Spark inferred from
  elsewhere changes the count, so the node stays unmapped). ``rows_in`` only when Spark read every row (no pushed
  filters, which may skip row groups).
- a filter: the Spark ``Filter`` right above the operator its input mapped to, with exactly its predicates.
- a join: the one Spark join over exactly the same scans, of the same type, with as many equi-keys and the same
  presence of a residual condition.
- an aggregate or distinct: the top of the one Spark aggregate chain (partial, exchange, final) over the same scans.

Anything else (several candidates, a predicate Spark fused into another operator, a join Spark reordered) is
reported unmapped with the reason. Projections, sorts and aliases pass rows through and are not reported.

Example: see tests/feedback/test_mapping.py (fixture graphs captured from Spark 4).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard, assert_never, get_args

from pushdown_client.feedback.graph import (
    SparkGraph,
    SparkNode,
    TableSource,
    attribute_names,
    filter_condition,
    not_null_column,
    split_conjuncts,
    split_keys,
)

#: The answer's join types as Spark prints them in a join's description.
JOIN_TYPES = {
    "inner": ("Inner",),
    "cross": ("Inner", "Cross"),
    "left": ("LeftOuter",),
    "right": ("RightOuter",),
    "full": ("FullOuter",),
    "semi": ("LeftSemi",),
    "anti": ("LeftAnti",),
}
#: The wire ``op`` names (the service's ``costmodel.kinds.registry.WireOp``, which the client does not import;
#: tests/feedback/test_mapping.py checks they are the same). ``visit`` matches them exhaustively.
WireOp = Literal[
    "scan",
    "filter",
    "project",
    "aggregate",
    "join",
    "union",
    "intersect",
    "except",
    "sort",
    "limit",
    "window",
    "distinct",
    "alias",
    "generate",
    "sample",
]


_WIRE_OPS = frozenset(get_args(WireOp))


def is_wire_op(op: object) -> TypeGuard[WireOp]:
    return op in _WIRE_OPS


@dataclass(frozen=True, slots=True)
class NodeActual:
    """What Spark counted for one answer node."""

    id: str
    rows_out: int
    rows_in: int | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "rows_out": self.rows_out}
        if self.rows_in is not None:
            out["rows_in"] = self.rows_in
        return out


@dataclass
class ActualRows:
    """The result: counted nodes, and the reason for every reported kind of node that is not counted."""

    nodes: list[NodeActual] = field(default_factory=list)
    unmapped: dict[str, str] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {"nodes": [n.to_wire() for n in self.nodes], "unmapped": dict(self.unmapped)}


def children_of(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The plan children of a wire node, in order."""
    if "input" in node:
        return [node["input"]]
    if "left" in node:
        return [node["left"], node["right"]]
    return list(node.get("inputs") or [])


def walk(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Pre-order over a wire plan."""
    yield node
    for child in children_of(node):
        yield from walk(child)


# ---------------------------------------------------------------- predicates on our side


def conjuncts(expr: Any) -> list[Any]:
    """A wire predicate split at its ANDs."""
    if isinstance(expr, dict) and expr.get("fn") == "and":
        return [part for arg in expr.get("args") or [] for part in conjuncts(arg)]
    return [expr]


def columns_of(expr: Any) -> set[str]:
    """Column names (last part, lower case) a wire expression reads at its own level (not inside subqueries)."""
    found: set[str] = set()
    if isinstance(expr, dict):
        if "op" in expr:  # a subquery's plan
            return found
        if isinstance(expr.get("col"), str):
            found.add(expr["col"].rsplit(".", 1)[-1].lower())
        for value in expr.values():
            found |= columns_of(value)
    elif isinstance(expr, list):
        for value in expr:
            found |= columns_of(value)
    return found


def same_predicates(
    ours: list[Any], spark_condition: str | None, never_null: frozenset[str] = frozenset()
) -> str | None:
    """None when Spark's filter evaluates exactly our conjuncts; else why not.

    ``never_null``: columns known to hold no NULL, whose ``isnotnull`` Spark may add without changing the count.
    """
    return same_conjuncts(ours, split_conjuncts(spark_condition) if spark_condition else [], never_null)


def same_conjuncts(ours: list[Any], spark_parts: list[str], never_null: frozenset[str] = frozenset()) -> str | None:
    """``same_predicates`` on Spark's conjuncts already split."""
    not_null_spark = {c for c in map(not_null_column, spark_parts) if c is not None}
    rest_spark = [p for p in spark_parts if not_null_column(p) is None]
    ours_not_null = {
        next(iter(columns_of(c)))
        for c in ours
        if isinstance(c, dict) and c.get("fn") == "is_not_null" and len(columns_of(c)) == 1
    }
    rest_ours = [c for c in ours if not (isinstance(c, dict) and c.get("fn") == "is_not_null")]
    if len(rest_ours) != len(rest_spark):
        return f"Spark's filter has {len(rest_spark)} predicates where the plan has {len(rest_ours)}"
    our_columns = set().union(*(columns_of(c) for c in rest_ours)) if rest_ours else set()
    spark_columns = set().union(*(attribute_names(p) for p in rest_spark)) if rest_spark else set()
    if our_columns != spark_columns:
        return f"Spark's filter reads {sorted(spark_columns)} where the plan's reads {sorted(our_columns)}"
    extra = not_null_spark - our_columns - ours_not_null - never_null
    if extra:
        return f"Spark's filter also drops NULLs of {sorted(extra)}"
    if ours_not_null - not_null_spark:
        return f"Spark's filter does not test {sorted(ours_not_null - not_null_spark)} for NULL"
    return None


# ---------------------------------------------------------------- the mapping


class _Mapper:
    def __init__(
        self, graph: SparkGraph, sources: Mapping[str, TableSource], never_null: Mapping[str, frozenset[str]]
    ) -> None:
        self.graph = graph
        self.never_null = {name.lower(): cols for name, cols in never_null.items()}
        self.sources = {name.lower(): source for name, source in sources.items()}
        self.result = ActualRows()
        #: answer node id -> the Spark operator that stands for it (structure), counted or not
        self.anchor: dict[str, int | None] = {}
        #: answer node id -> the scans it reads in Spark
        self.leaves: dict[str, frozenset[int] | None] = {}
        self.actual: dict[str, NodeActual] = {}

    def run(self, plan: Mapping[str, Any]) -> ActualRows:
        self.visit(plan)
        return self.result

    def visit(self, node: Mapping[str, Any]) -> None:
        for child in children_of(node):
            self.visit(child)
        op, node_id = str(node.get("op")), str(node.get("id"))
        kids = [str(c.get("id")) for c in children_of(node)]
        kid_leaves = [self.leaves.get(k) for k in kids]
        known = [x for x in kid_leaves if x is not None]
        self.leaves[node_id] = frozenset().union(*known) if kids and len(known) == len(kids) else None
        if not is_wire_op(op):
            self.anchor[node_id] = None
            self.result.unmapped[node_id] = f"unknown operator {op!r}"
            return
        match op:
            case "scan":
                self.scan(node_id, node)
            case "filter":
                self.filter(node_id, node, kids[0])
            case "join":
                self.join(node_id, node, kids)
            case "aggregate" | "distinct":
                self.aggregate(node_id, kids[0])
            case "project" | "sort" | "alias":  # their rows are their input's: they carry its operator up
                self.anchor[node_id] = self.anchor.get(kids[0]) if kids else None
            case "sample":
                self.sample(node_id, kids[0])
            case "union" | "intersect" | "except" | "limit" | "window" | "generate":
                self.anchor[node_id] = None
            case _:
                assert_never(op)

    def sample(self, node_id: str, input_id: str) -> None:
        """Not reported itself; stands for Spark's ``Sample`` right above its input's operator, so a filter above
        it can be mapped."""
        below = self.anchor.get(input_id)
        above = self.graph.up(below) if below is not None else None
        self.anchor[node_id] = above if above is not None and self.graph.node(above).kind == "Sample" else None

    def count(self, node_id: str, rows_out: int | None, rows_in: int | None) -> None:
        if rows_out is None:
            self.result.unmapped[node_id] = "Spark's operator has no row count"
            return
        actual = NodeActual(node_id, rows_out, rows_in)
        self.actual[node_id] = actual
        self.result.nodes.append(actual)

    def scan(self, node_id: str, node: Mapping[str, Any]) -> None:
        self.anchor[node_id], self.leaves[node_id] = None, None
        table = str(node.get("table") or "").lower()
        source = self.sources.get(table)
        if source is None:
            self.result.unmapped[node_id] = f"table {table!r} was not located in the session"
            return
        candidates = [s for s in self.graph.scans() if source.reads(s)]
        if any(other.reads(s) for s in candidates for name, other in self.sources.items() if name != table):
            self.result.unmapped[node_id] = f"several tables read the same source as {table!r}"
            return
        if len(candidates) != 1:
            self.result.unmapped[node_id] = f"Spark scans table {table!r} {len(candidates)} times"
            return
        scan = candidates[0]
        self.leaves[node_id] = frozenset({scan.id})
        self.anchor[node_id] = scan.id
        above = self.graph.up(scan.id)
        spark_filter = self.graph.node(above) if above is not None and self.graph.node(above).kind == "Filter" else None
        filters = [part for f in node.get("filters") or [] for part in conjuncts(f)]
        rows_in = scan.rows if scan.reads_every_row else None
        if not filters:
            if scan.reads_every_row:
                self.count(node_id, scan.rows, scan.rows)
            else:
                self.result.unmapped[node_id] = "Spark pushed filters into the scan: it may skip rows unread"
            return
        never_null = self.never_null.get(table, frozenset())
        why = (
            "Spark has no filter above the scan"
            if spark_filter is None
            else same_predicates(filters, filter_condition(spark_filter), never_null)
        )
        if why is not None:  # a Python UDF among the filters: Spark's filter is split around its evaluation
            chain = self.graph.filters_above(scan.id)
            if chain is None or same_conjuncts(filters, chain[1], never_null) is not None:
                self.result.unmapped[node_id] = why
                return
            spark_filter = self.graph.node(chain[0])
        assert spark_filter is not None
        self.anchor[node_id] = spark_filter.id
        self.count(node_id, spark_filter.rows, rows_in)

    def filter(self, node_id: str, node: Mapping[str, Any], input_id: str) -> None:
        self.anchor[node_id] = None
        below = self.anchor.get(input_id)
        if below is None:
            self.result.unmapped[node_id] = "the operator below it was not found in Spark's plan"
            return
        above = self.graph.up(below)
        ours = conjuncts(node.get("predicate"))
        why = (
            "Spark has no filter of its own here (fused or moved)"
            if above is None or self.graph.node(above).kind != "Filter"
            else same_predicates(ours, filter_condition(self.graph.node(above)))
        )
        if why is not None:  # a Python UDF in it: Spark's filter is split around the UDF's evaluation
            chain = self.graph.filters_above(below)
            if chain is None or same_conjuncts(ours, chain[1]) is not None:
                self.result.unmapped[node_id] = why
                return
            above = chain[0]
        assert above is not None
        self.anchor[node_id] = above
        feeding = self.actual.get(input_id)
        direct = self.graph.down(above) == (below,)
        self.count(node_id, self.graph.node(above).rows, feeding.rows_out if feeding and direct else None)

    def join(self, node_id: str, node: Mapping[str, Any], kids: list[str]) -> None:
        self.anchor[node_id] = None
        leaves = self.leaves[node_id]
        if leaves is None:
            self.result.unmapped[node_id] = "a table under it was not found in Spark's plan"
            return
        candidates = [n for n in self.graph.nodes.values() if n.is_join and self.graph.leaves(n.id) == leaves]
        if len(candidates) != 1:
            self.result.unmapped[node_id] = f"{len(candidates)} Spark joins read the same tables (reordered?)"
            return
        spark_join = candidates[0]
        why = _join_differs(node, spark_join)
        if why is not None:
            self.result.unmapped[node_id] = why
            return
        self.anchor[node_id] = spark_join.id
        inputs = [self.actual.get(k) for k in kids]
        below = tuple(self.anchor.get(k) for k in kids)
        direct = all(inputs) and set(self.graph.down(spark_join.id)) == set(below)
        rows_in = sum(i.rows_out for i in inputs if i is not None) if direct else None
        self.count(node_id, spark_join.rows, rows_in)

    def aggregate(self, node_id: str, input_id: str) -> None:
        self.anchor[node_id] = None
        leaves = self.leaves[node_id]
        if leaves is None:
            self.result.unmapped[node_id] = "a table under it was not found in Spark's plan"
            return
        tops = [
            n
            for n in self.graph.nodes.values()
            if n.is_aggregate and self.graph.leaves(n.id) == leaves and not self._feeds_aggregate(n.id, leaves)
        ]
        if len(tops) != 1:
            self.result.unmapped[node_id] = f"{len(tops)} Spark aggregations read the same tables"
            return
        top = tops[0]
        bottom = top.id
        while True:
            below = self.graph.down(bottom)
            if len(below) == 1 and self.graph.node(below[0]).is_aggregate:
                bottom = below[0]
                continue
            break
        self.anchor[node_id] = top.id
        feeding = self.actual.get(input_id)
        direct = feeding is not None and self.graph.down(bottom) == (self.anchor.get(input_id),)
        self.count(node_id, top.rows, feeding.rows_out if feeding and direct else None)

    def _feeds_aggregate(self, spark_id: int, leaves: frozenset[int]) -> bool:
        """Whether the next operator up is another aggregate of the same chain (partial under final)."""
        above = self.graph.up(spark_id)
        return above is not None and self.graph.node(above).is_aggregate and self.graph.leaves(above) == leaves


def _join_differs(node: Mapping[str, Any], spark_join: SparkNode) -> str | None:
    """None when Spark's join is the answer's join as far as its description shows; else why not."""
    join_type = str(node.get("type") or "inner")
    spark_types = JOIN_TYPES.get(join_type, ())
    desc = spark_join.desc
    if not any(f", {t}" in desc or f" {t}," in desc for t in spark_types):
        return f"Spark's join is not a {join_type} join: {desc[:120]}"
    parts = conjuncts(node.get("on")) if node.get("on") is not None else []
    equi = [p for p in parts if isinstance(p, dict) and p.get("fn") == "=" and len(columns_of(p)) >= 1]
    keys = desc.split("], [", 1)[0] if "], [" in desc else ""
    spark_keys = len(split_keys(keys[keys.find("[") + 1 :])) if keys else 0
    if spark_keys and spark_keys != len(equi):
        return f"Spark joins on {spark_keys} keys where the plan has {len(equi)}"
    found = [m for t in spark_types for m in re.finditer(rf"\b{t}\b", desc)]
    spark_residual = bool(found) and "(" in desc[found[0].end() :]
    our_residual = len(parts) > (len(equi) if spark_keys else 0)
    if spark_residual != our_residual:
        return "Spark's join condition differs from the plan's (a filter fused into it?)"
    return None


def map_actuals(
    plan: Mapping[str, Any],
    graph: SparkGraph,
    sources: Mapping[str, TableSource],
    never_null: Mapping[str, frozenset[str]] | None = None,
) -> ActualRows:
    """Spark's counts for the answer's ``plan`` (the rewritten plan, as run).

    ``sources`` says, for each table name the plan reads, what Spark's scan of it reads (``TableSource``);
    ``never_null`` names, per table, the columns its statistics say hold no NULL.
    """
    return _Mapper(graph, sources, never_null or {}).run(plan)


def never_null_columns(catalog: Mapping[str, Any] | None) -> dict[str, frozenset[str]]:
    """Per table, the columns whose statistics in the request's catalog count no NULL (``null_count: 0``).

    >>> never_null_columns({"tables": {"t": {"column_stats": {"a": {"null_count": 0}, "b": {"null_count": 3}}}}})
    {'t': frozenset({'a'})}
    """
    tables = (catalog or {}).get("tables") if isinstance(catalog, Mapping) else None
    found: dict[str, frozenset[str]] = {}
    for name, table in (tables or {}).items():
        stats = table.get("column_stats") if isinstance(table, Mapping) else None
        if isinstance(stats, Mapping):
            found[name.lower()] = frozenset(
                col.lower() for col, st in stats.items() if isinstance(st, Mapping) and st.get("null_count") == 0
            )
    return found
