"""The fields of a wire plan as countable facts, and the facts every operator kind must show.

A fact is ``(kind, field, value)``: ``("join", "type", "left")``, ``("window", "frame.start", "N preceding")``,
``("limit", "offset", "")``. Names and ids are left out, so two plans that mean the same give the same facts
whatever their renderer called things; a field dropped or changed on the way changes the count.

    >>> facts = plan_facts({"op": "limit", "count": 2, "offset": 1, "input": {"op": "scan", "table": "t"}})
    >>> sorted(f for f in facts if f[0] == "limit" and "offset" in f[1])
    [('limit', 'offset', ''), ('limit', 'offset.value', '1')]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from costmodel.joins import JOIN_TYPES
from costmodel.kinds.registry import all_kinds, kind_for_op

Fact = tuple[str, str, str]

#: Keys that hold child nodes: the walk follows them; they are no field of their own.
CHILD_KEYS = frozenset({"input", "inputs", "left", "right"})
#: Kinds this campaign's generator never writes, and why; it covers every other kind.
NOT_FROM_SQL = {
    "sample": "a seeded sample keeps other rows on another engine or plan, so the campaign's row comparison cannot "
    "hold; tests/sql/test_table_sample.py and tests/spark/test_sample.py cover TABLESAMPLE",
}
#: Wire fields of a kind the SQL adapter never writes, and why. The engine's own (scan filters) are covered on the
#: optimized plans instead; the test fails if a field listed here starts appearing in the adapter's plans.
NOT_FROM_SQL_FIELDS = {
    ("scan", "filters"): "the adapter writes WHERE as a filter node; the engine moves predicates into scans",
    ("scan", "containers"): "files and row groups come from the catalog (analyze), not from SQL",
    ("scan", "index"): "an index lookup is the engine's choice for Dolt-style indexes",
    ("scan", "columns"): "only for a table outside the catalog; the generator's tables are all in it",
    ("sort", "limit"): "a top-N sort comes from Substrait's fetch-over-sort; SQL's LIMIT is a limit node",
    ("alias", "columns"): "AS q(a, b) renames the derived table's own outputs instead (sqlglot's qualify)",
    ("join", "null_aware"): "NOT IN (subquery) stays a subquery predicate; null-aware anti joins come from plans",
}
#: Kinds whose nodes a renderer may add when it wraps a SELECT as a derived table (``SELECT * FROM (...) AS _t1``)
WRAPPERS = frozenset({"project", "alias"})

_BOUND = re.compile(r"^\d+ ")


def _bound(text: str) -> str:
    return _BOUND.sub("N ", text)


def plan_facts(plan: dict[str, Any]) -> Counter[Fact]:
    """Every node's facts, subquery plans included."""
    return Counter(_facts(plan))


def _facts(root: dict[str, Any]) -> Iterator[Fact]:
    stack = [root]
    while stack:
        node = stack.pop()
        op = node["op"]
        kind = kind_for_op(op)
        name = kind.name if kind is not None else op
        yield ("node", name, "")
        yield from _node_facts(name, node)
        for key in CHILD_KEYS & node.keys():
            value = node[key]
            stack.extend(value if isinstance(value, list) else [value])
        stack.extend(_subquery_plans(node))


def _node_facts(kind: str, node: dict[str, Any]) -> Iterator[Fact]:
    for key, value in node.items():
        if key in CHILD_KEYS or key in ("op", "id") or value in (None, [], {}, False, 0):
            continue
        if kind == "join" and key == "type":
            yield ("join", "type", value)
        elif kind == "union" and key == "all":
            pass  # below, with the op
        elif key in ("keys", "order_by"):
            yield (kind, key, "")
            for item in value:
                yield (kind, f"{key}.desc", str(bool(item.get("desc"))))
                yield (kind, f"{key}.nulls_first", str(item.get("nulls_first")))
        elif kind == "window" and key == "functions":
            yield (kind, key, "")
            for item in value:
                frame = item.get("frame")
                if frame is None:
                    yield (kind, "frame", "none")
                else:
                    yield (kind, "frame.kind", frame["kind"])
                    yield (kind, "frame.start", _bound(frame["start"]))
                    yield (kind, "frame.end", _bound(frame["end"]))
                    yield (kind, "frame", f"{frame['kind']} {frame['start']} and {frame['end']}")  # the numbers too
                if item.get("partition_by") is not None:
                    yield (kind, "functions.partition_by", "")
        elif kind == "limit":
            yield (kind, key, "")
            yield (kind, f"{key}.value", str(value))
        elif kind in ("aggregate", "window") and key in ("group_by", "aggregates", "partition_by"):
            yield (kind, key, "")
            yield (kind, f"{key}.length", str(len(value)))
            if key == "group_by" and any(isinstance(item, dict) and "as" in item for item in value):
                yield (kind, "group_by.computed", "")
        elif kind == "aggregate" and key == "grouping_sets":
            yield (kind, key, str(value))
            if [] in value:
                yield (kind, "grouping_sets.empty", "")
        elif kind == "scan" and key == "alias" and value == node.get("table"):
            pass
        else:
            yield (kind, key, "")
    if kind == "union":
        yield ("union", node["op"], "all" if node.get("all") else "distinct")
    for expr in _expressions(node):
        if "subquery" in expr:
            yield ("expr", "subquery", str(expr.get("kind")))
        if expr.get("distinct"):
            yield ("expr", "distinct", str(expr.get("fn")))


def _expressions(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every expression object of ``node`` (not of its children), nested ones included."""
    stack: list[Any] = [value for key, value in node.items() if key not in CHILD_KEYS]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if "subquery" in item or "fn" in item:
                yield item
            stack.extend(value for key, value in item.items() if key != "subquery")


def _subquery_plans(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for expr in _expressions(node):
        if isinstance(expr.get("subquery"), dict):
            yield expr["subquery"]


def lost_and_invented(before: Counter[Fact], after: Counter[Fact]) -> tuple[Counter[Fact], Counter[Fact]]:
    """Facts ``after`` lacks, and facts it has more of that the renderer's documented forms cannot explain.

    Two forms change the plan without losing anything (docs/sql-adapter.md, "Rendering"): a SELECT wrapped as a
    derived table adds projects and aliases; a semi or anti join is written ``[NOT] EXISTS (SELECT 1 FROM right
    WHERE on)``, which reads back as a filter with an EXISTS subquery, its ``on`` a filter inside it.
    """
    lost = before - after
    invented = Counter({f: n for f, n in (after - before).items() if f[0] not in WRAPPERS and f[1] not in WRAPPERS})
    semi = before[("join", "type", "semi")] + before[("join", "type", "anti")]
    if semi and invented[("expr", "subquery", "exists")] == semi:
        as_exists = Counter({("node", "join", ""): semi, ("join", "on", ""): semi, ("join", "null_aware", ""): semi})
        as_exists.update({("join", "type", "semi"): semi, ("join", "type", "anti"): semi})
        lost -= as_exists
        invented -= Counter({("expr", "subquery", "exists"): semi})
        invented -= Counter({("node", "filter", ""): 2 * semi, ("filter", "predicate", ""): 2 * semi})
    return lost, invented


def required_facts() -> set[tuple[str, str]] | set[Fact]:
    """(kind, field) pairs every kind's wire fields give, plus the values that matter, which SQL must cover."""
    fields: set[Any] = set()
    for kind in all_kinds():
        if kind.name in NOT_FROM_SQL:
            continue
        fields.add(("node", kind.name, ""))
        for key in kind.wire_keys - CHILD_KEYS:
            if (kind.name, key) not in NOT_FROM_SQL_FIELDS and (kind.name, key) != ("union", "all"):
                fields.add((kind.name, key))
    values: set[Fact] = {("join", "type", t) for t in JOIN_TYPES}
    values |= {("union", op, mode) for op in ("union", "intersect", "except") for mode in ("all", "distinct")}
    for kind, key in (("sort", "keys"), ("window", "order_by")):
        values |= {(kind, f"{key}.desc", d) for d in ("True", "False")}
        values |= {(kind, f"{key}.nulls_first", n) for n in ("True", "False")}
    values |= {("window", "frame.kind", k) for k in ("rows", "range")} | {("window", "frame", "none")}
    values |= {("window", "frame.start", b) for b in ("unbounded preceding", "N preceding", "current row")}
    values |= {("window", "frame.end", b) for b in ("N following", "unbounded following", "current row")}
    values |= {("aggregate", "group_by.computed", ""), ("aggregate", "grouping_sets.empty", "")}
    values |= {("expr", "subquery", k) for k in ("exists", "in", "scalar")} | {("expr", "distinct", "count")}
    return fields | values


def missing(required: set[Any], seen: Counter[Fact]) -> list[Any]:
    """Required facts (or (kind, field) pairs) no plan showed."""
    pairs = {f[:2] for f in seen}
    return sorted(r for r in required if (r not in pairs if len(r) == 2 else r not in seen))
