"""Pass 4, inference: predicates implied by the others, placed only where they lower the cost.

    a.k = b.k (join key) and a.k > 5   gives   b.k > 5 on b's side   (rules.infer_join_keys)
    (l.x = 1 AND r.z = 2) OR (l.x = 3 AND r.z = 4)   gives   l.x IN (1, 3)   (rules.or_derivation)

Derived predicates keep the original; at most MAX_DERIVED per plan.
"""

from __future__ import annotations

from costmodel.deadline import check_deadline
from costmodel.expr import Expr, conjuncts
from costmodel.passes.work import Work
from costmodel.plan import Join, children, walk_plan
from costmodel.positions import ABOVE, SCAN, Position, Pred, build_region, iter_region
from costmodel.reasons import Reason
from costmodel.rules.infer_join_keys import KeyEqualities, infer_across_keys
from costmodel.rules.join import ON_SIDES, WHERE_SIDES
from costmodel.rules.or_derivation import derive_per_side

MAX_DERIVED = 200


def infer(work: Work) -> None:
    if work.options.mode == "never":
        return
    skeleton = work.require_skeleton()
    derived = _Derived(work)
    add, queue = derived.add, derived.queue

    # OR conditions that stay in a join's ON can still lend each side a filter
    for node in walk_plan(skeleton):
        if isinstance(node, Join) and node.on is not None:
            for part in conjuncts(node.on):
                for side, form in derive_per_side(part, node, ON_SIDES[node.type]):
                    add(node, side, form, Reason.DERIVED_FROM_OR)

    queue.extend(work.preds)
    equalities = KeyEqualities(skeleton)
    while queue:
        check_deadline()
        pred = queue.pop(0)
        for pos in iter_region(pred.root):
            if not isinstance(pos.node, Join) or pos.kind == SCAN:
                continue
            join = pos.node
            for side, form in infer_across_keys(pos.form, join, equalities):
                add(join, side, form, Reason.INFERRED_FROM_JOIN_KEYS)
            if pos.kind == ABOVE and pos.stop is not None and pos.stop.reason == Reason.REFERENCES_BOTH_SIDES:
                for side, form in derive_per_side(pos.form, join, WHERE_SIDES[join.type]):
                    add(join, side, form, Reason.DERIVED_FROM_OR)


class _Derived:
    """Derived predicates joining ``work.preds``, each new one queued to derive from in turn."""

    def __init__(self, work: Work):
        self.preds, self.scan_pushdown = work.preds, work.options.scan_pushdown
        self.limit = len(self.preds) + MAX_DERIVED  # derived predicates are appended to the same list
        self.seen = {(p.root.node.id, p.root.kind, p.form) for p in self.preds}
        self.queue: list[Pred] = []

    def add(self, join: Join, side: int, form: Expr, reason: str) -> None:
        """``form`` above input ``side`` of ``join``, unless it is there already or the limit is reached."""
        child = children(join)[side]
        key = (child.id, ABOVE, form)
        if key in self.seen or len(self.preds) >= self.limit:
            return
        self.seen.add(key)
        root = build_region(Position(child, ABOVE, form), self.scan_pushdown)
        self.preds.append(Pred(len(self.preds), form, "derived", root, None, reason, join.id))
        self.queue.append(self.preds[-1])
