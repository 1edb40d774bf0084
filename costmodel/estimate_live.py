"""Which columns' NDVs an estimate still needs to carry: those something above it may read.

A row estimate carries the NDV of every tracked column of its subtree, so a
join chain's estimates grew with the number of tables below and each join
copied them all: quadratic. A column's NDV is read only where an expression
reads the column (a join key, a predicate, a grouping key, a projection, a
distinct's columns, a union mapping its inputs' columns), and where any
predicate to place could stand (every position of its region). Above the
highest of those places nothing reads it again, so it is dropped there.

    Filter: t2.v > 2            reads t2.v from the join's estimate
      Join: t1.k = t2.k         reads t1.k, t2.k from its inputs: both dropped from its own estimate
        Scan: t1
        Scan: t2

A column read in two places that are not one above the other (which plans do
not produce: each column comes from one operator) is never dropped. Dropping
only what nobody reads leaves every figure as it was; estimates are smaller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from costmodel.expr import column_ids
from costmodel.plan import Distinct, Node, SetOp, children, node_expressions, output_cids
from costmodel.positions import ABOVE, Pred, iter_region

#: A node's place in the plan: (pre-order index, the last pre-order index below it, depth, parent id).
Place = tuple[int, int, int, str | None]


def ndv_drops(skeleton: Node, preds: Sequence[Pred]) -> dict[str, frozenset[int]]:
    """For each node id, the columns whose NDV nothing above that node reads: dropped from its estimate.

    >>> from costmodel.plan import Field, Filter, Scan
    >>> from costmodel.expr import Call, Column, Literal
    >>> scan = Scan("s", "t", fields=(Field(1, "a"), Field(2, "b")))
    >>> plan = Filter("f", Call(">", (Column("a", 1), Literal(1))), scan)
    >>> ndv_drops(plan, [])
    {'f': frozenset({1})}
    """
    place: dict[str, Place] = {}
    order: list[Node] = []
    stack: list[tuple[Node, int, str | None]] = [(skeleton, 0, None)]
    while stack:
        node, depth, parent = stack.pop()
        if node.id in place:  # ids name the places drops apply at: without unique ids, drop nothing
            return {}
        place[node.id] = (len(order), len(order), depth, parent)
        order.append(node)
        for kid in reversed(children(node)):
            stack.append((kid, depth + 1, node.id))
    for node in reversed(order):  # a subtree is a run of the pre-order after its root
        first, last, depth, parent = place[node.id]
        if parent is not None:
            p_first, p_last, p_depth, p_parent = place[parent]
            place[parent] = (p_first, max(p_last, last), p_depth, p_parent)

    reads: dict[int, list[str]] = {}  # cid -> ids of the nodes whose estimates read it last
    kept: set[int] = set()  # read above the root itself: never dropped
    for node in order:
        node_id = node.id
        for expr in node_expressions(node):
            for cid in column_ids(expr):
                _read(reads, cid, node_id)
        if isinstance(node, Distinct):
            for cid in output_cids(node):
                _read(reads, cid, node_id)
        elif isinstance(node, SetOp):  # a union maps its inputs' columns onto its own
            for kid in node.inputs:
                for cid in output_cids(kid):
                    _read(reads, cid, node_id)

    for pred in preds:
        pred_cids = column_ids(pred.form)
        for pos in iter_region(pred.root):
            at = place[pos.node.id][3] if pos.kind == ABOVE else pos.node.id
            for cid in pred_cids if pos.form is pred.form else column_ids(pos.form):
                if at is None:
                    kept.add(cid)
                else:
                    _read(reads, cid, at)

    drops: dict[str, set[int]] = {}
    for cid, ats in reads.items():
        if cid in kept:
            continue
        # the highest reader (of two at one depth, neither lies under the other, and the check below fails)
        top = place[ats[0]]
        for at in ats:
            if place[at][2] < top[2]:
                top = place[at]
        if _all_under(top, ats, place):  # one path: every reader lies under the highest
            drops.setdefault(order[top[0]].id, set()).add(cid)
    return {node_id: frozenset(cids) for node_id, cids in drops.items()}


def _read(reads: dict[int, list[str]], cid: int, at: str) -> None:
    found = reads.get(cid)
    if found is None:
        reads[cid] = [at]
    else:
        found.append(at)


def _all_under(top: Place, ats: list[str], place: Mapping[str, Place]) -> bool:
    """Whether every node of ``ats`` lies in the subtree of ``top`` (its pre-order range)."""
    for at in ats:
        first = place[at][0]
        if first < top[0] or first > top[1]:
            return False
    return True


def without(ndv: dict[int, float], drop: frozenset[int]) -> dict[int, float]:
    """``ndv`` without the columns of ``drop`` (``ndv`` itself when it holds none of them).

    >>> without({1: 5.0, 2: 7.0}, frozenset({2}))
    {1: 5.0}
    """
    if drop.isdisjoint(ndv):
        return ndv
    return {cid: value for cid, value in ndv.items() if cid not in drop}
