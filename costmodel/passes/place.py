"""Pass 5, placement by cost: each predicate goes to the legal position where the whole plan costs least.

Mode ``always`` takes the deepest legal position (rule-based pushdown), mode
``never`` leaves every predicate where it was; see ``costmodel.placement`` for
the search. A predicate held by cost whose decision flips inside its
selectivity interval goes where the worst case costs least
(``costmodel.robust``). Past WORK_BUDGET conjunct estimations the remaining
predicates are placed by rule, with a warning.
"""

from __future__ import annotations

from typing import Final

from costmodel.cost import CostModel
from costmodel.estimate_live import ndv_drops
from costmodel.materialize import Built
from costmodel.passes.work import Work
from costmodel.placement import place
from costmodel.plan import Filter
from costmodel.positions import ABOVE, ON, SCAN, Position
from costmodel.robust import robust_placement

#: conjunct estimations placement may spend before it places the rest by rule (deepest legal): a TPC-H query
#: spends at most 113, a filter of 330 conjuncts about 110,000 (each candidate re-estimates the whole filter, so
#: a wide filter's costing grows with the square of its width until the budget stops it; 400,000 made that
#: hump a second per plan and time against plan size steeper than n^1.2: docs/decisions/0001-engine-choices.md)
WORK_BUDGET: Final = 150_000


def placement(work: Work) -> None:
    model = work.model
    model.drop_unread(ndv_drops(work.require_skeleton(), work.preds))
    work.absent, work.fallback_from = place(
        work.preds,
        work.options.mode,
        work.materializer(),
        model,
        lambda: model.work > WORK_BUDGET,
        lambda pos, built: _free_pass(model, pos, built),
    )
    if work.options.mode == "cost" and work.fallback_from is None:
        for pred in work.preds:
            if pred.kind != "derived" and not pred.by_rule:
                pred.robust = robust_placement(work, pred)


def _free_pass(model: CostModel, pos: Position, built: Built) -> bool:
    """The benefit model's cases r >= 1: below an operator that does not shrink the rows the
    predicate would see (project, sort, union, a cross or expanding join, a scan's own filters),
    1 - r <= 0 <= p * r1, so going below pays whenever the predicate costs the same there."""
    below = pos.below[0]
    if pos.kind != ABOVE or below.kind == ON:
        return False
    if model.predicate_cost(pos.form) != model.predicate_cost(below.form):
        return False
    if below.kind == SCAN:
        return True
    if isinstance(pos.node, Filter):
        return False
    # r as the operator stands now: predicates placed before this one may already filter its inputs
    node = built.tops.get(pos.node.id)
    while isinstance(node, Filter) and node.id != pos.node.id:
        node = node.input
    if node is None:
        return False
    row = model.node_cost(node)
    side = pos.entered_child() or 0
    rows_in = row.inputs[side] if side < len(row.inputs) else row.rows_in
    return rows_in > 0 and row.rows_out >= rows_in * (1 - 1e-9)
