"""Spark's executed plan as a plain graph: operators, their descriptions and their output row counts.

Spark's SQL status store keeps, per execution, the final physical plan (after adaptive execution) as a graph of
nodes with a name (``Filter``, ``Scan parquet``, ``BroadcastHashJoin`` ...), a description (the operator's
``simpleString``: a filter's condition, a scan's location and pushed filters) and metric values. This module holds
that graph without any Spark object, so the mapping onto the answer's plan is a pure function tested on fixtures.

Edges in the status store run from child to parent. A scalar or IN subquery is a child of every operator that
uses it (``Subquery`` node); it is kept apart from the operators' main inputs. A reused exchange is one node with
several parents.

Example::

    >>> g = SparkGraph.from_dict({"nodes": [{"id": 1, "name": "Scan parquet ", "desc": "FileScan parquet [a#1]",
    ...     "rows": 10}, {"id": 2, "name": "Filter", "desc": "Filter (a#1 > 5)", "rows": 4}], "edges": [[1, 2]]})
    >>> g.node(2).rows, g.inputs(2)
    (4, (1,))
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Operators that pass every row they receive on unchanged (so a count below them is the count above them).
ROW_PRESERVING = frozenset(
    {
        "Project",
        "ColumnarToRow",
        "RowToColumnar",
        "InputAdapter",
        "Exchange",
        "BroadcastExchange",
        "ShuffleExchange",
        "AQEShuffleRead",
        "ShuffleQueryStage",
        "BroadcastQueryStage",
        "TableCacheQueryStage",
        "ReusedExchange",
        "Sort",
        "AdaptiveSparkPlan",
        "CustomShuffleReader",
        "Coalesce",
    }
)
#: Nodes that evaluate Python UDFs for the operator above them: every row passes, with the UDFs' results added as
#: ``pythonUDF<n>`` columns, which the ``Filter`` above tests.
PYTHON_EVALUATIONS = ("BatchEvalPython", "ArrowEvalPython")
#: Subquery holders: their edges carry a subquery's result, not rows of the operator's input.
SUBQUERY_NODES = frozenset({"Subquery", "SubqueryBroadcast", "ReusedSubquery", "SubqueryAdaptiveBroadcast"})
AGGREGATE_NODES = frozenset({"HashAggregate", "ObjectHashAggregate", "SortAggregate"})
ROWS_METRIC = "number of output rows"

_ATTRIBUTE = re.compile(r"\b([A-Za-z_][\w]*)#\d+L?\b")


@dataclass(frozen=True, slots=True)
class SparkNode:
    """One physical operator: ``rows`` is its ``number of output rows`` metric (None when it has none)."""

    id: int
    name: str
    desc: str
    rows: int | None

    @property
    def kind(self) -> str:
        return self.name.strip()

    @property
    def is_scan(self) -> bool:
        kind = self.kind
        return kind.startswith("Scan") or kind.endswith("Scan") or "TableScan" in kind or kind == "Range"

    @property
    def is_join(self) -> bool:
        return self.kind.endswith("Join") or self.kind == "CartesianProduct"

    @property
    def is_aggregate(self) -> bool:
        return self.kind in AGGREGATE_NODES

    @property
    def scan_identity(self) -> str:
        """What a scan reads, without the columns or filters this query asked of it.

        A file scan is its source and location; anything else is its name and the names of its columns.
        """
        location = re.search(r"Location: (.*?)(?:, [A-Z][A-Za-z]+: |$)", self.desc)
        if location:
            return f"{self.kind} @ {location.group(1)}"
        columns = re.search(r"\[([^\]]*)\]", self.desc)
        names = sorted(set(_ATTRIBUTE.findall(columns.group(1)))) if columns else []
        return f"{self.kind} [{', '.join(names)}]"

    @property
    def columns(self) -> frozenset[str]:
        """The column names a scan outputs (its first ``[...]``), lower case.

        >>> sorted(SparkNode(1, "Scan parquet ", "FileScan parquet [p_partkey#0L,P_Name#1] Batched: true", 5).columns)
        ['p_name', 'p_partkey']
        """
        columns = re.search(r"\[([^\]]*)\]", self.desc)
        return frozenset(n.lower() for n in _ATTRIBUTE.findall(columns.group(1))) if columns else frozenset()

    @property
    def reads_every_row(self) -> bool:
        """A scan's count is the table's rows unless filters were pushed into it (row groups may be skipped)."""
        pushed = re.search(r"PushedFilters: \[([^\]]*)\]", self.desc)
        partition = re.search(r"PartitionFilters: \[([^\]]*)\]", self.desc)
        return not (pushed and pushed.group(1).strip()) and not (partition and partition.group(1).strip())


@dataclass(frozen=True, slots=True)
class TableSource:
    """What a table's scan reads: its ``SparkNode.scan_identity`` and, when known, the table's columns.

    Spark cuts a scan's printed location at 100 characters (``spark.sql.maxMetadataStringLength``), so tables
    in sibling directories under a long path (``.../tpch/part`` and ``.../tpch/partsupp``) print alike; a scan is
    then the table's only if the columns it reads are the table's. Tables still alike stay unmapped.

    >>> cut = "InMemoryFileIndex(1 paths)[file:/long/pa..."
    >>> part = TableSource(f"Scan parquet @ {cut}", frozenset({"p_name", "p_size"}))
    >>> part.reads(SparkNode(1, "Scan parquet ", f"FileScan parquet [p_name#1] Location: {cut}, Format: x", 9))
    True
    >>> part.reads(SparkNode(2, "Scan parquet ", f"FileScan parquet [ps_partkey#7L] Location: {cut}, Format: x", 9))
    False
    """

    identity: str
    columns: frozenset[str] | None = None

    @staticmethod
    def of(scan: SparkNode) -> TableSource:
        """The source of a table whose whole scan (every column) is ``scan``."""
        return TableSource(scan.scan_identity, scan.columns)

    def reads(self, scan: SparkNode) -> bool:
        """Whether ``scan`` reads this table: the same identity, and only columns the table has."""
        return (
            scan.is_scan
            and scan.scan_identity == self.identity
            and (self.columns is None or scan.columns <= self.columns)
        )


@dataclass(frozen=True)
class SparkGraph:
    """The operators of one or more executions, with main-input edges and subquery edges kept apart."""

    nodes: Mapping[int, SparkNode]
    children: Mapping[int, tuple[int, ...]]
    parents: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    @staticmethod
    def build(nodes: Iterable[SparkNode], edges: Iterable[tuple[int, int]]) -> SparkGraph:
        """``edges`` as the status store gives them: (child, parent). Subquery edges are dropped here."""
        by_id = {node.id: node for node in nodes}
        children: dict[int, list[int]] = {i: [] for i in by_id}
        parents: dict[int, list[int]] = {i: [] for i in by_id}
        for child, parent in edges:
            if child not in by_id or parent not in by_id or by_id[child].kind in SUBQUERY_NODES:
                continue
            if by_id[parent].is_scan:  # a scan's "children" are subqueries in its pushed filters
                continue
            if child not in children[parent]:
                children[parent].append(child)
                parents[child].append(parent)
        return SparkGraph(by_id, {k: tuple(v) for k, v in children.items()}, {k: tuple(v) for k, v in parents.items()})

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> SparkGraph:
        """From ``{"nodes": [{"id", "name", "desc", "rows"}], "edges": [[child, parent]]}`` (fixtures)."""
        nodes = [SparkNode(int(n["id"]), str(n["name"]), str(n["desc"]), n.get("rows")) for n in data["nodes"]]
        return SparkGraph.build(nodes, [(int(c), int(p)) for c, p in data["edges"]])

    def to_dict(self) -> dict[str, Any]:
        nodes = [{"id": n.id, "name": n.name, "desc": n.desc, "rows": n.rows} for n in self.nodes.values()]
        edges = [[c, p] for p, cs in self.children.items() for c in cs]
        return {"nodes": nodes, "edges": edges}

    def node(self, node_id: int) -> SparkNode:
        return self.nodes[node_id]

    def inputs(self, node_id: int) -> tuple[int, ...]:
        return self.children.get(node_id, ())

    def scans(self) -> list[SparkNode]:
        return [n for n in self.nodes.values() if n.is_scan]

    def leaves(self, node_id: int) -> frozenset[int]:
        """The scans under ``node_id`` through main inputs (a reused exchange counts its scans once)."""
        seen: set[int] = set()
        found: set[int] = set()
        stack = [node_id]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            if self.nodes[current].is_scan:
                found.add(current)
                continue
            stack.extend(self.inputs(current))
        return frozenset(found)

    def up(self, node_id: int) -> int | None:
        """The first operator above ``node_id`` that is not row-preserving; None at the top or at a fork."""
        current = node_id
        while True:
            parents = self.parents.get(current, ())
            if len(parents) != 1:
                return None
            current = parents[0]
            if self.nodes[current].kind not in ROW_PRESERVING:
                return current

    def filters_above(self, node_id: int) -> tuple[int, list[str]] | None:
        """The ``Filter`` operators right above ``node_id`` as one: the topmost one's id and all their conjuncts, a
        Python UDF's result column (``pythonUDF0#12``) spelled as the call it holds (Spark evaluates a filter's
        Python UDFs in a node below it and may push the rest of the filter below that node). None when no
        ``Filter`` is right above.

        >>> g = SparkGraph.from_dict({"nodes": [
        ...     {"id": 1, "name": "Scan parquet ", "desc": "FileScan parquet [k#1,t#2]", "rows": 10},
        ...     {"id": 2, "name": "Filter", "desc": "Filter isnotnull(k#1)", "rows": 9},
        ...     {"id": 3, "name": "BatchEvalPython", "desc": "BatchEvalPython [f(t#2)#5], [pythonUDF0#7]", "rows": 9},
        ...     {"id": 4, "name": "Filter", "desc": "Filter pythonUDF0#7", "rows": 3}],
        ...     "edges": [[1, 2], [2, 3], [3, 4]]})
        >>> g.filters_above(1)
        (4, ['isnotnull(k#1)', 'f(t#2)'])
        """
        top, conjuncts, results = None, [], {}
        current = node_id
        while len(self.parents.get(current, ())) == 1:
            current = self.parents[current][0]
            node = self.nodes[current]
            if node.kind.startswith(PYTHON_EVALUATIONS):
                results.update(python_results(node.desc))
            elif node.kind == "Filter":
                top = current
                conjuncts.extend(split_conjuncts(_spelled(filter_condition(node), results)))
            elif node.kind not in ROW_PRESERVING:
                break
        return None if top is None else (top, conjuncts)

    def down(self, node_id: int) -> tuple[int, ...]:
        """The first operators below ``node_id`` that are not row-preserving, one per input."""
        found: list[int] = []
        for child in self.inputs(node_id):
            current = child
            while self.nodes[current].kind in ROW_PRESERVING and len(self.inputs(current)) == 1:
                current = self.inputs(current)[0]
            found.append(current)
        return tuple(found)


def merge(graphs: Sequence[SparkGraph]) -> SparkGraph:
    """Several executions' graphs as one (node ids renumbered apart)."""
    nodes: list[SparkNode] = []
    edges: list[tuple[int, int]] = []
    offset = 0
    for graph in graphs:
        for node in graph.nodes.values():
            nodes.append(SparkNode(node.id + offset, node.name, node.desc, node.rows))
        for parent, kids in graph.children.items():
            edges.extend((child + offset, parent + offset) for child in kids)
        offset += max(graph.nodes, default=0) + 1
    return SparkGraph.build(nodes, edges)


# ---------------------------------------------------------------- conditions as Spark prints them


def split_conjuncts(condition: str) -> list[str]:
    """A condition Spark printed, split at its top-level ANDs (Spark parenthesizes every binary operator).

    Spark prints string literals unquoted, so a literal holding " AND " splits wrongly: the counts of
    predicates then differ and the node stays unmapped rather than mapped wrongly.

    >>> split_conjuncts("((isnotnull(b#6) AND (b#6 > 5)) AND ((a#1 = 1) OR (a#1 = 2)))")
    ['isnotnull(b#6)', '(b#6 > 5)', '((a#1 = 1) OR (a#1 = 2))']
    """
    text = condition.strip()
    if not (text.startswith("(") and _closing(text, 0) == len(text) - 1):
        return [text]
    inner = text[1:-1]
    depth = 0
    for i, char in enumerate(inner):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif depth == 0 and inner.startswith(" AND ", i):
            return split_conjuncts(inner[:i]) + split_conjuncts(inner[i + 5 :])
    return [text]


def _closing(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def python_results(desc: str) -> dict[str, str]:
    """A Python evaluation node's result columns and the calls they hold, from its description.

    >>> python_results("BatchEvalPython [f(a#1)#5, g(upper(b#2), 3)#6], [pythonUDF0#7, pythonUDF1#8]")
    {'pythonUDF0#7': 'f(a#1)', 'pythonUDF1#8': 'g(upper(b#2), 3)'}
    """
    lists = re.findall(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]", desc)
    if len(lists) < 2:
        return {}
    calls = [re.sub(r"#\d+L?$", "", call.strip()) for call in split_keys(lists[0])]
    names = [name.strip() for name in split_keys(lists[1])]
    return dict(zip(names, calls, strict=False)) if len(calls) == len(names) else {}


def split_keys(text: str) -> list[str]:
    """``a#1, b#2`` -> two keys (commas inside parentheses stay)."""
    keys, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            keys.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        keys.append(text[start:].strip())
    return keys


def _spelled(condition: str, results: Mapping[str, str]) -> str:
    """``condition`` with each Python UDF result column replaced by its call."""
    if not results:
        return condition
    return re.sub(r"\bpythonUDF\d+#\d+L?\b", lambda m: results.get(m.group(0), m.group(0)), condition)


def filter_condition(node: SparkNode) -> str:
    """The condition of a ``Filter`` node's description (``Filter (a#1 > 5)`` -> ``(a#1 > 5)``)."""
    return node.desc[len("Filter ") :] if node.desc.startswith("Filter ") else node.desc


def attribute_names(text: str) -> set[str]:
    """Column names a printed expression references (``a#5`` -> ``a``), lower case, subquery handles excluded.

    >>> sorted(attribute_names("(a#5 < ReusedSubquery Subquery subquery#10, [id=#80])"))
    ['a']
    """
    return {name.lower() for name in _ATTRIBUTE.findall(text) if name.lower() != "subquery"}


def not_null_column(conjunct: str) -> str | None:
    """``isnotnull(b#6)`` -> ``b``; None for anything else."""
    match = re.fullmatch(r"isnotnull\(([A-Za-z_]\w*)#\d+L?\)", conjunct.strip())
    return match.group(1).lower() if match else None
