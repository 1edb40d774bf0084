"""Joins: WHERE predicates go to a preserved side, ON predicates to a null-supplying side.

WHERE (the predicate sits on the join's output)::

    Filter: c.name LIKE 'A%'              Join: inner c.state_id = s.id
      Join: inner c.state_id = s.id  ->     Filter: c.name LIKE 'A%'
        Scan: cities c                        Scan: cities c
        Scan: states s                      Scan: states s

Into a side only when every row that side loses would have been removed from
the output anyway: both sides of inner and cross joins, the left of left,
semi and anti joins, the right of right joins; never into a full join.

ON (a conjunct of the join condition that reads one side): into the side
whose rows may be dropped without changing which rows are preserved: either
side of inner, cross and semi joins, the right of left and anti joins, the
left of right joins; never for full joins nor a null-aware (NOT IN) anti join.
"""

from __future__ import annotations

from typing import Final

from costmodel.expr import Call, Expr, column_ids
from costmodel.expr_raise import can_raise
from costmodel.joins import JOIN_TYPES
from costmodel.plan import Join, output_cids
from costmodel.reasons import Reason
from costmodel.rules import Blocked, Crossing, Outcome

#: sides a WHERE predicate may enter, by join type (costmodel.joins)
WHERE_SIDES: Final = {name: t.where_sides for name, t in JOIN_TYPES.items()}
#: sides an ON conjunct may enter, by join type (costmodel.joins)
ON_SIDES: Final = {name: t.on_sides for name, t in JOIN_TYPES.items()}


def side_of(predicate: Expr, node: Join) -> int | None:
    """0 or 1 when the predicate reads only that side; None when both (or neither)."""
    used = column_ids(predicate)
    left = output_cids(node.left)
    if not used:
        return 0
    if used <= left:
        return 0
    right = output_cids(node.right)
    if used <= right:
        return 1
    return None


def is_cross_side_equality(predicate: Expr, node: Join) -> bool:
    """``l.x = r.y`` (each side of ``=`` reading one join input): a join key, so it belongs in the condition."""
    if not (isinstance(predicate, Call) and predicate.fn == "=" and len(predicate.args) == 2):
        return False
    left = output_cids(node.left)
    a, b = (column_ids(arg) for arg in predicate.args)
    if not a or not b:
        return False
    return (a <= left and not (b & left)) or (b <= left and not (a & left))


def _guarded(predicate: Expr, node: Join) -> Blocked | None:
    if node.on is not None and can_raise(predicate):
        return Blocked(Reason.CAN_RAISE_GUARD, "the predicate can raise and the join condition may guard it")
    return None


def _enter_side(predicate: Expr, node: Join, sides: dict[str, tuple[int, ...]], what: str) -> Outcome:
    """The side ``predicate`` may enter, given which sides a join type allows (``WHERE_SIDES``/``ON_SIDES``)."""
    guard = _guarded(predicate, node)
    if guard is not None:
        return guard
    side = side_of(predicate, node)
    if side is None:
        return Blocked(Reason.REFERENCES_BOTH_SIDES, f"the {what} reads columns of both join inputs")
    if sides is ON_SIDES and node.null_aware:
        return Blocked(Reason.NULL_AWARE_ANTI_JOIN, "NOT IN semantics depend on every row of the subquery side")
    allowed = sides[node.type]
    if not column_ids(predicate) and allowed:
        side = allowed[0]  # a constant filters any allowed side alike
    if node.type == "full":
        return Blocked(Reason.FULL_JOIN, "no input of a full join may lose rows before it")
    if side not in allowed:
        name = "right" if side else "left"
        if sides is WHERE_SIDES:
            return Blocked(Reason.NULL_SUPPLYING_SIDE, f"the {name} input of a {node.type} join is null-supplying")
        return Blocked(
            Reason.PRESERVED_SIDE_ON_PREDICATE,
            f"rows of the {name} input of a {node.type} join are kept even when the condition fails",
        )
    return [Crossing(side, predicate)]


def push_through_join(predicate: Expr, node: Join) -> Outcome:
    """A WHERE predicate on the join's output."""
    return _enter_side(predicate, node, WHERE_SIDES, "predicate")


def push_join_condition(predicate: Expr, node: Join) -> Outcome:
    """A conjunct of the join's ON condition."""
    return _enter_side(predicate, node, ON_SIDES, "condition")
