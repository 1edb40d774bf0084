"""Columns carried up for a predicate raised above the projection that dropped them.

``SELECT count(*) FROM (SELECT o_orderkey, o_custkey FROM orders WHERE f(o_comment)) o JOIN customer c ...``:
``f`` reads ``o_comment``, which the derived table does not select. Raising ``f`` above the join means selecting
``o_comment`` in the derived table too, carrying it through the alias and the join, and dropping it again
above, where the first operator that names its columns (a projection or an aggregate) does not name it: the
query's output keeps its names, order and types. The legality pass widens the skeleton where a predicate can
rise only so (``widen``); the cost model charges the carried column on the rows each join or sort passes on
with it (``carried_path``, ``CostModel.carry_cost``), so a raise pays only where the rows it saves the
predicate outweigh the wider rows; the rewrite drops a carried column wherever no predicate above reads it
(``narrow_unread``), so a predicate that stays where it was written leaves the query's columns as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from costmodel.expr import Column, column_ids
from costmodel.plan import (
    Alias,
    Field,
    Filter,
    Join,
    NamedExpr,
    Node,
    Project,
    Sort,
    children,
    output_cids,
    output_fields,
)

#: operators a carried column may be widened into: those that name their output columns
WIDENED = (Project, Alias)
#: operators a carried column passes through as it is, each passing it on with every row it emits
PASSED = (Join, Filter, Sort)
#: operators that pay for the wider rows: a join hashes, shuffles or broadcasts them, a sort moves them
CHARGED = (Join, Sort)


def widen(node: Node, fields: Sequence[Field], spelled: Mapping[int, Column]) -> Node | None:
    """``node`` (a projection or an alias) also passing on ``fields`` of its input, under names it does not use
    yet (a projection reads each as ``spelled`` spells it, the predicate's own spelling, else as the field's);
    None for another kind of operator."""
    if isinstance(node, Project):
        taken = {e.name.lower() for e in node.exprs}
        extra = tuple(NamedExpr(spelled.get(f.cid, f.column()), _free_name(f.name, taken), f.cid) for f in fields)
        return Project(node.id, node.exprs + extra, node.input)
    if isinstance(node, Alias):
        inner = {f.cid: f for f in output_fields(node.input)}
        taken = {f.name.lower() for f in node.fields}
        added = tuple(Field(f.cid, _free_name(inner[f.cid].name, taken), node.name, f.type) for f in fields)
        names = None if node.column_names is None else node.column_names + tuple(f.name for f in added)
        return Alias(node.id, node.name, node.input, node.fields + added, names)
    return None


def _free_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``, ... : the first not in ``taken`` (lower case), which it joins."""
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{name}_{n}"
    taken.add(candidate.lower())
    return candidate


def carried_path(start: Node, cid: int, carried: Mapping[str, frozenset[int]]) -> list[tuple[Node, Node]] | None:
    """From ``start`` down to the operator that carries column ``cid`` up: each operator passed with its input
    that brings the column; None when no operator below ``start`` carries it (the reader stands below it)."""
    path: list[tuple[Node, Node]] = []
    node = start
    while True:
        if cid in carried.get(node.id, frozenset()):
            return path
        kid = next((k for k in children(node) if cid in output_cids(k)), None)
        if kid is None:
            return None
        path.append((node, kid))
        node = kid


def narrow_unread(root: Node, carried: Mapping[str, frozenset[int]]) -> Node:
    """``root`` with every carried column dropped again from the operators below which no filter or join
    condition reads it (the predicate it was carried for stands lower)."""
    if not carried:
        return root
    every = frozenset().union(*carried.values())
    drop: dict[str, frozenset[int]] = {}
    stack: list[tuple[Node, frozenset[int]]] = [(root, frozenset())]
    while stack:
        node, read_above = stack.pop()
        if node.id in carried and isinstance(node, WIDENED):
            unread = carried[node.id] - read_above
            if unread:
                drop[node.id] = drop.get(node.id, frozenset()) | unread
        reads = read_above | (_reads(node) & every)
        stack.extend((kid, reads) for kid in children(node))
    if not drop:
        return root
    return _rebuilt(root, lambda node: _narrowed(node, drop[node.id]) if node.id in drop else node)


def _reads(node: Node) -> frozenset[int]:
    """The columns a filter or a join condition reads: where a raised predicate stands."""
    if isinstance(node, Filter):
        return column_ids(node.predicate)
    if isinstance(node, Join) and node.on is not None:
        return column_ids(node.on)
    return frozenset()


def _narrowed(node: Node, cids: frozenset[int]) -> Node:
    if isinstance(node, Project):
        return Project(node.id, tuple(e for e in node.exprs if e.cid not in cids), node.input)
    if isinstance(node, Alias):
        kept = [i for i, f in enumerate(node.fields) if f.cid not in cids]
        names = None if node.column_names is None else tuple(node.column_names[i] for i in kept)
        return Alias(node.id, node.name, node.input, tuple(node.fields[i] for i in kept), names)
    return node


def _rebuilt(root: Node, change: Callable[[Node], Node]) -> Node:
    """``root`` rebuilt children first (no recursion: a plan may be 10,000 levels deep), ``change`` applied to
    each operator over its rebuilt inputs; a subtree nothing changed in is the same object."""
    done: dict[int, Node] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in done:
            continue
        if not ready:
            stack.append((node, True))
            stack.extend((kid, False) for kid in children(node) if id(kid) not in done)
            continue
        kids = [done[id(kid)] for kid in children(node)]
        done[id(node)] = change(node.with_children(kids))
    return done[id(root)]
