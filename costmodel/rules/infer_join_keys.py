"""Transitive inference over equi-join keys, keeping the original.

    Filter: l.k > 5                      Filter: l.k > 5   (kept)
      Join: inner l.k = r.k       ->       Join: inner l.k = r.k
        Scan: l                              Scan: l
        Scan: r                              Filter: r.k > 5   (inferred)
                                               Scan: r

Every output row has l.k = r.k, so a predicate on l.k alone holds for r.k
too; right rows failing it could only meet left rows the original removes.
Only onto a side whose rows may be dropped: both sides of inner and semi
joins, the right of a plain anti join; never a null-supplying side of an
outer join, never the subquery side of NOT IN (a NULL there empties the result).
Key columns must share a type: equality across types goes through casts.
Never from a predicate that can raise: the other side may hold the values that raise.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from costmodel.cost import split_join_condition
from costmodel.expr import Column, Expr, column_ids, has_subquery, is_deterministic, substitute
from costmodel.expr_raise import can_raise
from costmodel.joins import JOIN_TYPES
from costmodel.kinds.registry import kind_of
from costmodel.plan import Join, Node, children, output_cids

Pair = tuple[Column, Column]
#: where a pair stands in the order the equalities are read: (0 the join's own, 1 its left, 2 its right;
#: the contributing node's place in a walk that takes the last input first; the pair's place in its node)
_Order = tuple[int, int, int]


def column_pairs(node: Join) -> list[Pair]:
    keys, _ = split_join_condition(node, output_cids(node.left))
    return [(a, b) for a, b in keys if isinstance(a, Column) and isinstance(b, Column) and a.type == b.type]


class KeyEqualities:
    """The key equalities of every join in one plan, indexed by column, so that asking at a join costs the
    size of the answer's class of equal columns, not a walk of the plan below it (a chain of joins, asked at
    each join, was cubic).

    A join's equalities hold on the rows of every ancestor that passes its rows on (each kind's
    ``key_equalities`` says which inputs it passes): walked once, each node keeps its place in a pre-order
    walk that takes the last input first (the order the equalities were always read in), the size of its
    subtree, and the depth of the highest ancestor its equalities still hold at.
    """

    def __init__(self, root: Node) -> None:
        self._place: dict[int, tuple[int, int, int]] = {}  # id(node) -> (pre-order index, last index below, depth)
        #: per column: the pairs that mention it, in pre-order: (index, place in node, top depth, pair)
        self._by_cid: dict[int, list[tuple[int, int, int, Pair]]] = {}
        self._starts: dict[int, list[int]] = {}
        order: list[Node] = []
        depth_of: dict[int, tuple[int, int]] = {id(root): (0, 0)}  # id -> (depth, depth of the highest holder)
        stack = [root]
        while stack:
            node = stack.pop()
            depth, top = depth_of[id(node)]
            index = len(order)
            order.append(node)
            pairs, passed = kind_of(node).key_equalities(node)
            passed_ids = {id(kid) for kid in passed}
            for kid in children(node):
                depth_of[id(kid)] = (depth + 1, top if id(kid) in passed_ids else depth + 1)
            stack.extend(children(node))
            for i, (a, b) in enumerate(pairs):
                entry = (index, i, top, (a, b))
                self._by_cid.setdefault(a.cid, []).append(entry)
                if b.cid != a.cid:
                    self._by_cid.setdefault(b.cid, []).append(entry)
        index_of = {id(node): index for index, node in enumerate(order)}
        size = [1] * len(order)
        for index in range(len(order) - 1, -1, -1):  # a subtree is a run of the pre-order after its root
            for kid in children(order[index]):
                size[index] += size[index_of[id(kid)]]
        for index, node in enumerate(order):
            self._place[id(node)] = (index, index + size[index] - 1, depth_of[id(node)][0])
        self._starts = {cid: [entry[0] for entry in entries] for cid, entries in self._by_cid.items()}
        self._nodes = order

    def knows(self, node: Node) -> bool:
        index = self._place.get(id(node))
        return index is not None and self._nodes[index[0]] is node

    def pairs_linking(self, cid: int, node: Join) -> list[Pair]:
        """The pairs of ``node``'s own keys and of the equalities holding on each input that link ``cid`` to
        other columns, in the order a full walk would list them (own keys, then the left input's, then the
        right's, each pre-order, last input first)."""
        own = column_pairs(node)
        sides = [(rank, self._place[id(side)]) for rank, side in ((1, node.left), (2, node.right))]
        found: dict[_Order, Pair] = {}
        seen, frontier = {cid}, [cid]
        while frontier:
            current = frontier.pop()
            reached: list[Column] = []
            for i, (a, b) in enumerate(own):
                if a.cid == current or b.cid == current:
                    found[(0, 0, i)] = (a, b)
                    reached += (a, b)
            entries = self._by_cid.get(current)
            if entries:
                starts = self._starts[current]
                for rank, (first, last, depth) in sides:
                    for at in range(bisect_left(starts, first), bisect_right(starts, last)):
                        index, i, top, pair = entries[at]
                        if top <= depth:  # the pair still holds at this input
                            found[(rank, index, i)] = pair
                            reached += pair
            for column in reached:
                if column.cid not in seen:
                    seen.add(column.cid)
                    frontier.append(column.cid)
        return [found[key] for key in sorted(found)]


def _equal_to(cid: int, pairs: list[Pair]) -> dict[int, Column]:
    """Every column transitively equal to ``cid`` under ``pairs``, in the order a search that takes the last
    found column first and reads ``pairs`` in order meets them (that order names the inferred predicates).

    >>> a, b, c = Column("a", 1, "int"), Column("b", 2, "int"), Column("c", 3, "int")
    >>> list(_equal_to(1, [(b, c), (a, b)]))
    [2, 3]
    """
    linked: dict[int, list[Column]] = {}
    for a, b in pairs:
        linked.setdefault(a.cid, []).append(b)
        linked.setdefault(b.cid, []).append(a)
    found: dict[int, Column] = {}
    frontier = [cid]
    while frontier:
        for other in linked.get(frontier.pop(), ()):
            if other.cid not in found and other.cid != cid:
                found[other.cid] = other
                frontier.append(other.cid)
    return found


def infer_across_keys(predicate: Expr, node: Join, index: KeyEqualities | None = None) -> list[tuple[int, Expr]]:
    """(side, predicate) pairs implied by ``predicate`` and the key equalities at ``node``.

    Equalities come from ``node``'s own keys and from inner joins below it, so
    ``a.k = 7`` above ``(a JOIN b ON a.k = b.k) JOIN c ON b.k = c.k`` gives ``c.k = 7``.
    ``index``: the plan's equalities, indexed once (``KeyEqualities``); None indexes ``node``'s subtree.
    """
    used = column_ids(predicate)
    # has_subquery before is_deterministic, which walks a subquery's whole plan (at every join the predicate passes)
    if len(used) != 1 or has_subquery(predicate) or not is_deterministic(predicate) or can_raise(predicate):
        return []
    if node.null_aware:
        return []
    allowed = JOIN_TYPES[node.type].infer_sides
    (cid,) = used
    source_side = 0 if cid in output_cids(node.left) else 1
    target = 1 - source_side
    if target not in allowed:
        return []
    if index is None or not index.knows(node):
        index = KeyEqualities(node)
    equal = _equal_to(cid, index.pairs_linking(cid, node))
    target_cids = output_cids(node.right if target else node.left)
    # pairs only link columns of one type, so every column in ``equal`` shares the predicate column's type
    return [
        (target, substitute(predicate, {cid: column}))
        for other_cid, column in equal.items()
        if other_cid in target_cids
    ]
