"""Pass 1, normalize: take every movable conjunct out of filters and join conditions, leaving a skeleton.

    Filter: a > 1 AND rand() < 0.5 AND b = 2      skeleton: Filter: rand() < 0.5 AND b = 2
      TableScan: t                                           TableScan: t
                                                  to place:  a > 1 (where, from the filter)

Conjunctions split (``rules.split_conjunctions``): a conjunct that must stay
(non-deterministic, unknown function, after one, reading an aggregate, guarded)
stays in the skeleton with a ``blocked`` decision; constant ones fold (TRUE
goes, FALSE stays as "never true"). One-side conjuncts of a join condition
become predicates to place too. A predicate that can raise may not later pass
where an earlier predicate or a join condition stood (its guards).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from costmodel.expr import (
    FALSE,
    Expr,
    and_,
    conjuncts,
    has_aggregate_or_window,
    is_deterministic,
)
from costmodel.expr_raise import can_raise
from costmodel.fold import Truth, constant_truth
from costmodel.functions import opaque_detail, opaque_names
from costmodel.passes.work import Work
from costmodel.plan import Filter, Join, Node, children, walk_plan, with_children
from costmodel.positions import ABOVE, ON, Position, Pred
from costmodel.reasons import Reason
from costmodel.render import to_sql
from costmodel.rules.join import side_of
from costmodel.rules.split_conjunctions import classify_conjuncts, fold_conjunct


def normalize(work: Work) -> None:
    work.skeleton = _strip(work.plan, work)
    _mark_guards(work)


def _blocked(part: Expr, operator: str, reason: Reason) -> dict[str, Any]:
    """The decision for a conjunct that stays where the query put it."""
    entry: dict[str, Any] = {"predicate": to_sql(part), "operator": operator, "action": "blocked", "reason": reason}
    if reason == Reason.UNKNOWN_FUNCTION:
        entry["detail"] = opaque_detail(part)
    return entry


def _strip(plan: Node, work: Work) -> Node:
    """``plan`` without its movable conjuncts, which become ``work.preds``."""
    stripper = _Stripper(work)
    # children before parents, left to right, with an explicit stack (a plan may be 10,000 levels deep)
    done: list[Node] = []
    stack: list[tuple[Node, bool]] = [(plan, False)]
    while stack:
        node, ready = stack.pop()
        kids = children(node)
        if not ready:
            stack.append((node, True))
            for kid in reversed(kids):
                stack.append((kid, False))
            continue
        stripped = done[len(done) - len(kids) :]
        del done[len(done) - len(kids) :]
        done.append(stripper.visit(node, stripped))
    return done[0]


class _Stripper:
    """What ``_strip`` does at each node."""

    def __init__(self, work: Work):
        self.work = work

    def add(self, form: Expr, kind: str, node: Node, pos_kind: str, origin_filter: str | None) -> None:
        preds = self.work.preds
        preds.append(Pred(len(preds), form, kind, Position(node, pos_kind, form), origin_filter))

    def visit(self, node: Node, kids: list[Node]) -> Node:
        """``node`` over its already stripped children ``kids``."""
        if isinstance(node, Filter):
            below = kids[0]
            stay: list[Expr] = []
            movable: list[Expr] = []
            for part, reason in classify_conjuncts(node.predicate):
                if reason is not None:
                    stay.append(part)
                    self.work.fixed.append(_blocked(part, below.id, reason))
                    continue
                folded = fold_conjunct(part, movable=True)
                if folded is None:
                    self.work.rewrites.append(
                        {"rule": "remove_always_true", "operator": node.id, "predicate": to_sql(part)}
                    )
                    continue
                if folded is FALSE and part is not FALSE:
                    self.work.rewrites.append(
                        {
                            "rule": "never_true",
                            "operator": node.id,
                            "predicate": to_sql(part),
                            "detail": "the predicate is never true: the result is empty",
                        }
                    )
                movable.append(folded)
            for part in movable:
                self.add(part, "where", below, ABOVE, node.id)
            if stay:
                return Filter(node.id, and_(stay), below)
            return below
        node = with_children(node, kids)
        if isinstance(node, Join) and node.on is not None:
            keep: list[Expr] = []
            for part in conjuncts(node.on):
                one_side = side_of(part, node) is not None and constant_truth(part) is not Truth.TRUE
                if one_side and is_deterministic(part) and not has_aggregate_or_window(part):
                    self.add(part, "on", node, ON, None)
                    continue
                keep.append(part)
                if one_side:
                    reason = (
                        Reason.NONDETERMINISTIC_PREDICATE
                        if not is_deterministic(part)
                        else Reason.AGGREGATE_IN_PREDICATE
                    )
                    reason = Reason.UNKNOWN_FUNCTION if opaque_names(part) else reason
                    self.work.fixed.append(_blocked(part, node.id, reason))
            node = replace(node, on=and_(keep) if keep else None)
        return node


def _mark_guards(work: Work) -> None:
    """A predicate that can raise may not pass where an earlier (lower) predicate or a join condition stood."""
    guarded_joins = {n.id for n in walk_plan(work.plan) if isinstance(n, Join) and n.on is not None}
    origins: list[str] = []
    for pred in work.preds:
        if can_raise(pred.form):
            pred.stop_at = frozenset(origins) | guarded_joins
        if pred.kind == "where":
            origins.append(pred.root.node.id)
