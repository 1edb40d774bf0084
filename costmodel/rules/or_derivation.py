"""Per-side OR derivation, keeping the original.

    (l.x = 1 AND r.z = 2) OR (l.x = 3 AND r.z = 4)
      gives  l.x IN (1, 3)  on the left  and  r.z IN (2, 4)  on the right

Each disjunct implies its own side's conjuncts, so the OR of those is implied
by the whole predicate and can filter that side early. A side is derived only
when every disjunct has a conjunct reading that side alone.
"""

from __future__ import annotations

from costmodel.expr import (
    Call,
    Column,
    Expr,
    Literal,
    and_,
    column_ids,
    conjuncts,
    disjuncts,
    has_subquery,
    is_deterministic,
    or_,
)
from costmodel.expr_raise import can_raise
from costmodel.plan import Join, output_cids


def derive_side(predicate: Expr, side_cids: frozenset[int]) -> Expr | None:
    """The part of an OR predicate that one side can check alone, or None."""
    parts = disjuncts(predicate)
    if len(parts) < 2 or has_subquery(predicate) or not is_deterministic(predicate) or can_raise(predicate):
        return None
    derived: list[Expr] = []
    for disjunct in parts:
        mine = [c for c in conjuncts(disjunct) if column_ids(c) and column_ids(c) <= side_cids]
        if not mine:
            return None
        derived.append(and_(mine))
    return _as_in_list(derived) or or_(derived)


def _as_in_list(parts: list[Expr]) -> Expr | None:
    """``x = 1 OR x = 3`` as ``x IN (1, 3)``."""
    column: Column | None = None
    values: list[Expr] = []
    for part in parts:
        if not (isinstance(part, Call) and part.fn == "=" and len(part.args) == 2):
            return None
        a, b = part.args
        if isinstance(a, Literal) and isinstance(b, Column):
            a, b = b, a
        if not (isinstance(a, Column) and isinstance(b, Literal)):
            return None
        if column is not None and a.cid != column.cid:
            return None
        column = a
        if b not in values:
            values.append(b)
    assert column is not None
    return Call("in", (column, *values))


def derive_per_side(predicate: Expr, node: Join, sides: tuple[int, ...]) -> list[tuple[int, Expr]]:
    out = []
    for side in sides:
        child = node.left if side == 0 else node.right
        derived = derive_side(predicate, output_cids(child))
        if derived is not None:
            out.append((side, derived))
    return out
