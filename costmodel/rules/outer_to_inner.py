"""An outer join whose null-supplying side a WHERE predicate rejects becomes inner.

    Filter: s.name = 'x'                     Filter: s.name = 'x'
      Join: left c.state_id = s.id    ->       Join: inner c.state_id = s.id

Proof by substitution: fold the predicate with the null-supplying side's
columns NULL (``costmodel.fold``); if it can never be true, every row that the
outer join padded with NULLs is removed anyway. A full join becomes left or
right when only one side is rejected. COALESCE, IS NULL, IS NOT TRUE and an
OR across both sides do not reject, so those joins stay outer.
"""

from __future__ import annotations

from costmodel.expr import Expr, is_deterministic
from costmodel.fold import rejects_nulls
from costmodel.plan import Join, output_cids


def simplify_outer_join(predicate: Expr, node: Join) -> str | None:
    """The join type ``node`` may take given a WHERE ``predicate`` on its output, or None."""
    if node.type not in ("left", "right", "full") or not is_deterministic(predicate):
        return None
    left = output_cids(node.left)
    right = output_cids(node.right)
    if node.type == "left":
        return "inner" if rejects_nulls(predicate, right) else None
    if node.type == "right":
        return "inner" if rejects_nulls(predicate, left) else None
    no_right_padding = rejects_nulls(predicate, right)  # rows whose right side is NULL-padded go
    no_left_padding = rejects_nulls(predicate, left)
    if no_right_padding and no_left_padding:
        return "inner"
    if no_right_padding:
        return "right"
    if no_left_padding:
        return "left"
    return None
