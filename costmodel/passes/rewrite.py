"""Pass 6, rewrite: build the plan the placements describe, then scan-level access (pruning, indexes).

A filter standing where a query's filter stood keeps that filter's id; a new
one gets a fresh id (``f1``, ``f2``, ...). In mode ``cost`` every filter's
conjuncts are then put in rank order (``costmodel.conjunct_order``). Mode ``never`` returns the plan as
written and reports only facts (a never-true predicate), no rewrites.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final

from costmodel.carry import narrow_unread
from costmodel.conjunct_order import order_conjuncts
from costmodel.materialize import Placements, placements_of
from costmodel.passes.work import Work
from costmodel.plan import Node, walk_plan
from costmodel.positions import ABOVE, Pred
from costmodel.scan_access import ScanAccess

#: Filter ids minted so far in one request, across the outer plan and every subquery plan (each is
#: optimized on its own): a new filter id is unique in the whole answer, not only in its own plan.
MINTED_IDS: Final[ContextVar[set[str] | None]] = ContextVar("minted_filter_ids", default=None)


def rewrite(work: Work) -> None:
    work.scan_access = ScanAccess(work.catalog, work.model)
    if work.options.mode == "never":
        work.final = work.plan
        # report, do not rewrite: only the facts a caller should hear about stay
        work.rewrites[:] = [r for r in work.rewrites if r["rule"] == "never_true"]
        return
    ids = _assign_filter_ids(work.preds, work.require_skeleton())
    work.final = built_plan(work, placements_of(work.preds), work.scan_access, ids)
    if work.options.mode == "cost":
        model = work.model
        work.final, orders = order_conjuncts(
            work.final, model.predicate_cost, lambda part: model.estimator.estimate(part).selectivity
        )
        work.rewrites.extend(orders)


def built_plan(
    work: Work, placements: Placements, access: ScanAccess, filter_ids: dict[str, str] | None = None
) -> Node:
    """The plan ``placements`` describe over the skeleton, with scan-level access (pruning, indexes) applied when
    scan pushdown is on: the rewrite's plan, and the one the rule-based baseline costs."""
    root = narrow_unread(work.materializer().build(placements, filter_ids).root, work.model.carried)
    return access.apply(root) if work.options.scan_pushdown else root


def _assign_filter_ids(preds: list[Pred], skeleton: Node) -> dict[str, str]:
    taken = {node.id for node in walk_plan(skeleton)}
    minted = MINTED_IDS.get()
    allocator = IdAllocator(taken | (minted or set()))
    ids: dict[str, str] = {}
    groups: dict[str, list[Pred]] = {}
    for pred in preds:
        for pos in pred.cut:
            if pos.kind == ABOVE:
                groups.setdefault(pos.node.id, []).append(pred)
    for node in walk_plan(skeleton):
        group = groups.get(node.id)
        if not group:
            continue
        for pred in sorted(group, key=lambda p: p.index):
            if pred.origin_filter and pred.origin_filter not in allocator.taken:
                ids[node.id] = pred.origin_filter
                allocator.taken.add(pred.origin_filter)
                break
        else:
            ids[node.id] = allocator.new()
            if minted is not None:
                minted.add(ids[node.id])
    return ids


@dataclass
class IdAllocator:
    """Mints node ids that collide with none already in the plan."""

    taken: set[str] = field(default_factory=set)
    prefix: str = "f"
    counter: int = 0

    def new(self) -> str:
        while True:
            self.counter += 1
            candidate = f"{self.prefix}{self.counter}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
