"""A predicate's legal positions: a tree from where the query put it down to where the rules stop it.

A ``Position`` is the predicate on a node's output (ABOVE), in a join's condition (ON) or in a scan's filters
(SCAN); below it are the positions the predicate may go on to, one per input it enters (a union forks into
every branch). ``build_region`` fills the tree from the rules (``costmodel.legality``, ``costmodel.rules``);
``costmodel.placement`` chooses a cut through it by cost.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from costmodel.expr import Expr
from costmodel.legality import cross
from costmodel.plan import Join, Node, Scan, children
from costmodel.reasons import Reason
from costmodel.rules import Blocked
from costmodel.rules.join import is_cross_side_equality, push_join_condition
from costmodel.rules.scan import push_into_scan

ABOVE: Final = "above"
ON: Final = "on"
SCAN: Final = "scan"


@dataclass(eq=False)
class Position:
    """The predicate as ``form`` on ``node``'s output (ABOVE), in its join condition (ON), or in its filters (SCAN)."""

    node: Node
    kind: str
    form: Expr
    below: list[Position] = field(default_factory=list)
    stop: Blocked | None = None
    cost_here: float | None = None
    best_below: float | None = None
    #: an ON position a WHERE predicate reached from above: the end of its way down
    form_from_where: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.node.id, self.kind)

    def entered_child(self) -> int | None:
        """Which input of ``node`` the first position below enters (by id), or None."""
        if not self.below:
            return None
        target = self.below[0].node.id
        return next((i for i, kid in enumerate(children(self.node)) if kid.id == target), None)


@dataclass(eq=False)
class Pred:
    """One predicate to place: a WHERE conjunct, a join-condition conjunct, or a derived one."""

    index: int
    form: Expr
    kind: str  # "where" | "on" | "derived"
    root: Position
    origin_filter: str | None = None
    derived_reason: str | None = None
    via: str | None = None  # the join a derived predicate was inferred at
    cut: list[Position] = field(default_factory=list)
    #: nodes this predicate may not go below: where its guards stood (only for predicates that can raise)
    stop_at: frozenset[str] = frozenset()
    #: a derived predicate placed by cost: the plan's cost with it at its best cut, logged beside the cost
    #: without it so that the decision (added only when strictly cheaper) recomputes from the log
    cost_with: float | None = None
    #: placed where rule-based pushdown puts it (mode cost, a predicate cheaper than ``expensive_threshold``)
    by_rule: bool = False
    #: where the query wrote it: node id, position kind and form (set by the legality pass)
    origin: tuple[str, str, Expr] | None = None
    #: that position inside a region that starts higher (the predicate may rise); None when the region starts there
    written: Position | None = None
    #: the worst-case comparison where the decision flips inside the selectivity interval (``costmodel.robust``)
    robust: dict[str, Any] | None = None


def build_region(pos: Position, scan_pushdown: bool, stop_at: frozenset[str] = frozenset()) -> Position:
    """Fill in ``pos.below``/``pos.stop`` with every legal position under ``pos`` (explicit stack, no recursion)."""
    stack = [pos]
    while stack:
        stack.extend(_fill(stack.pop(), scan_pushdown, stop_at))
    return pos


def _fill(pos: Position, scan_pushdown: bool, stop_at: frozenset[str]) -> list[Position]:
    """Set ``pos.below`` (or ``pos.stop``); returns the new positions below, still to be filled."""
    if pos.kind == SCAN or (pos.kind == ON and pos.form_from_where):
        return []
    node = pos.node
    if pos.kind == ABOVE and node.id in stop_at:
        pos.stop = Blocked(Reason.CAN_RAISE_GUARD, "the predicate can raise and a predicate below may guard it")
        return []
    if pos.kind == ON:
        assert isinstance(node, Join)
        outcome = push_join_condition(pos.form, node)
    elif isinstance(node, Scan):
        if not scan_pushdown:
            return []
        outcome = push_into_scan(pos.form, node)
        if isinstance(outcome, Blocked):
            pos.stop = outcome
        else:
            pos.below = [Position(node, SCAN, outcome[0].form)]
        return []
    else:
        outcome = cross(pos.form, node)
    if (
        isinstance(outcome, Blocked)
        and outcome.reason == "references_both_sides"
        and isinstance(node, Join)
        and node.type in ("inner", "cross")
        and is_cross_side_equality(pos.form, node)
    ):
        # Filter(l.k = r.k) over an inner join is the join keyed on it too (a cross join becomes inner);
        # other two-sided predicates stay above, where they cost the same (the Polars seed's a + b > 12)
        pos.below = [Position(node, ON, pos.form, form_from_where=True)]
        return []
    if isinstance(outcome, Blocked):
        pos.stop = outcome
        return []
    kids = children(node)
    pos.below = [Position(kids[c.index], ABOVE, c.form) for c in outcome]
    return pos.below


def iter_region(pos: Position) -> Iterator[Position]:
    stack = [pos]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.below)


def deepest(pos: Position) -> list[Position]:
    """The leaves of ``pos``'s region, left to right."""
    out: list[Position] = []
    stack = [pos]
    while stack:
        current = stack.pop()
        if current.below:
            stack.extend(current.below[::-1])
        else:
            out.append(current)
    return out
