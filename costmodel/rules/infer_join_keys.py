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
"""

from __future__ import annotations

from costmodel.cost import split_join_condition
from costmodel.expr import Call, Column, Expr, column_ids, has_subquery, is_deterministic, substitute
from costmodel.plan import Join, output_fields

INFER_SIDES = {"inner": (0, 1), "cross": (0, 1), "semi": (0, 1), "anti": (1,)}


def infer_across_keys(predicate: Expr, node: Join) -> list[tuple[int, Expr]]:
    """(side, predicate) pairs implied by ``predicate`` and ``node``'s equi-join keys."""
    used = column_ids(predicate)
    if len(used) != 1 or not is_deterministic(predicate) or has_subquery(predicate):
        return []
    if node.null_aware:
        return []
    allowed = INFER_SIDES.get(node.type, ())
    (cid,) = used
    left_cids = {f.cid for f in output_fields(node.left)}
    keys, _ = split_join_condition(node, left_cids)
    out: list[tuple[int, Expr]] = []
    for left_key, right_key in keys:
        if not (isinstance(left_key, Column) and isinstance(right_key, Column)):
            continue
        if left_key.type != right_key.type:
            continue
        if cid == left_key.cid and 1 in allowed:
            out.append((1, substitute(predicate, {cid: right_key})))
        elif cid == right_key.cid and 0 in allowed:
            out.append((0, substitute(predicate, {cid: left_key})))
    return out


def is_equi_key(predicate: Expr) -> bool:
    return isinstance(predicate, Call) and predicate.fn in ("=", "<=>") and all(
        isinstance(a, Column) for a in predicate.args
    )
