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

from costmodel.cost import split_join_condition
from costmodel.expr import Column, Expr, can_raise, column_ids, has_subquery, is_deterministic, substitute
from costmodel.joins import JOIN_TYPES
from costmodel.kinds.registry import kind_of
from costmodel.plan import Join, Node, output_fields


def column_pairs(node: Join) -> list[tuple[Column, Column]]:
    left_cids = {f.cid for f in output_fields(node.left)}
    keys, _ = split_join_condition(node, left_cids)
    return [(a, b) for a, b in keys if isinstance(a, Column) and isinstance(b, Column) and a.type == b.type]


def _equalities_below(node: Node) -> list[tuple[Column, Column]]:
    """Key equalities of inner joins under ``node`` that hold on every row ``node`` emits."""
    out: list[tuple[Column, Column]] = []
    stack = [node]
    while stack:
        current = stack.pop()
        pairs, inputs = kind_of(current).key_equalities(current)  # each kind says which equalities survive it
        out.extend(pairs)
        stack.extend(inputs)
    return out


def _equal_to(cid: int, pairs: list[tuple[Column, Column]]) -> dict[int, Column]:
    """Every column transitively equal to ``cid`` under ``pairs``."""
    found: dict[int, Column] = {}
    frontier = [cid]
    while frontier:
        current = frontier.pop()
        for a, b in pairs:
            for x, y in ((a, b), (b, a)):
                if x.cid == current and y.cid not in found and y.cid != cid:
                    found[y.cid] = y
                    frontier.append(y.cid)
    return found


def infer_across_keys(predicate: Expr, node: Join) -> list[tuple[int, Expr]]:
    """(side, predicate) pairs implied by ``predicate`` and the key equalities at ``node``.

    Equalities come from ``node``'s own keys and from inner joins below it, so
    ``a.k = 7`` above ``(a JOIN b ON a.k = b.k) JOIN c ON b.k = c.k`` gives ``c.k = 7``.
    """
    used = column_ids(predicate)
    if len(used) != 1 or not is_deterministic(predicate) or has_subquery(predicate) or can_raise(predicate):
        return []
    if node.null_aware:
        return []
    allowed = JOIN_TYPES[node.type].infer_sides
    (cid,) = used
    left_cids = {f.cid for f in output_fields(node.left)}
    source_side = 0 if cid in left_cids else 1
    target = 1 - source_side
    if target not in allowed:
        return []
    pairs = column_pairs(node) + _equalities_below(node.left) + _equalities_below(node.right)
    equal = _equal_to(cid, pairs)
    target_cids = {f.cid for f in output_fields(node.right if target else node.left)}
    # pairs only link columns of one type, so every column in ``equal`` shares the predicate column's type
    return [
        (target, substitute(predicate, {cid: column}))
        for other_cid, column in equal.items()
        if other_cid in target_cids
    ]
