"""Cost-based placement: for each predicate, the legal position with the lowest plan cost.

A predicate's legal positions form a tree (``Position``): it starts where the
query put it and goes down while the rules allow; at a union it forks into
every branch. A *cut* through that tree is a placement: stop here, or go on
below (into every branch of a fork). ``best_cut`` tries each position and
keeps the one whose whole plan costs least, the other predicates standing
where they currently are; ties go to the deeper position, as a rule-based
optimizer would. Plans are rebuilt with shared unchanged subtrees, so the
cost model only re-estimates the path that changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from costmodel.cut_change import cut_change
from costmodel.materialize import Built, Materializer, placements_of
from costmodel.positions import Position, Pred, deepest
from costmodel.trampoline import Done, Step, run

if TYPE_CHECKING:
    from costmodel.cost import CostModel

_EPS: Final = 1e-9


def _better_or_equal(candidate: float, incumbent: float) -> bool:
    return candidate <= incumbent + _EPS * max(1.0, abs(incumbent))


#: Whether going below ``pos`` is sure to pay in the plan as it now stands, so ``pos`` needs no costing.
FreePass = Callable[[Position, "Built"], bool]


def best_cut(
    pred: Pred,
    cost: Callable[[list[Position]], float],
    free_pass: Callable[[Position], bool] | None = None,
) -> tuple[list[Position], float]:
    """The cheapest cut of ``pred``'s region, recording each position's cost on the way."""
    return run(_best_from(pred.root, [], cost, free_pass))


def _best_from(
    pos: Position,
    fixed: list[Position],
    cost: Callable[[list[Position]], float],
    free_pass: Callable[[Position], bool] | None,
) -> Step[tuple[list[Position], float]]:
    """``best_cut`` from ``pos`` down, ``fixed`` standing. Trampolined (``costmodel.trampoline``): a region may
    be 10,000 positions deep. A module function, not a closure over itself: such a closure is a reference
    cycle, and everything it reaches (the plans costed) would wait for the cyclic garbage collector."""
    if free_pass is not None and len(pos.below) == 1 and free_pass(pos):
        sub, sub_cost = yield _best_from(pos.below[0], fixed, cost, free_pass)
        pos.best_below = sub_cost
        yield Done((sub, sub_cost))
        return
    here = cost(fixed + [pos])
    pos.cost_here = here
    best, best_cost = [pos], here
    if len(pos.below) == 1:
        sub, sub_cost = yield _best_from(pos.below[0], fixed, cost, free_pass)
        pos.best_below = sub_cost
        if _better_or_equal(sub_cost, best_cost):
            best, best_cost = sub, sub_cost
    elif len(pos.below) > 1:
        chosen: list[Position] = []
        for i, branch in enumerate(pos.below):
            sub, _ = yield _best_from(branch, fixed + chosen + pos.below[i + 1 :], cost, free_pass)
            chosen.extend(sub)
        together = cost(fixed + chosen)
        pos.best_below = together
        if _better_or_equal(together, best_cost):
            best, best_cost = chosen, together
    yield Done((best, best_cost))


def place(
    preds: list[Pred],
    mode: str,
    materializer: Materializer,
    model: CostModel,
    over_budget: Callable[[], bool] = lambda: False,
    free_pass: FreePass | None = None,
) -> tuple[dict[int, float], int | None]:
    """Decide every predicate's cut in place: ``model`` costs the plan once, after which every candidate is
    costed incrementally (``Materializer.moved``: the rebuilt nodes' estimates).

    Returns, for derived predicates, the plan cost without them, and the index
    of the first predicate placed by rule (deepest legal) because costing had
    used up its budget, if any.
    """
    absent_costs: dict[int, float] = {}
    fallback_from: int | None = None
    for pred in preds:
        pred.cut = [] if pred.kind == "derived" else [pred.root]
    if mode == "never":
        return absent_costs, None

    def best_at(pred: Pred, start: Built) -> tuple[list[Position], float, Callable[[list[Position]], float]]:
        """The best cut of ``pred`` with the other predicates as in ``start``, and the costing used."""
        where = pred.cut
        # The latest cut costed and its plan: the next candidate is costed as a move from it. In a fork the
        # next candidate differs by one branch (its top position out, the candidate in), so only that
        # branch is rebuilt and the estimates settle below the fork.
        latest: list[tuple[list[Position], Built]] = []

        def cost(cut: list[Position]) -> float:
            if not latest:
                built = materializer.moved(start, pred.index, where, cut, model)
            else:
                before, base = latest[0]
                gone, came = cut_change(before, cut)  # a fork's cuts share all but a branch or two
                if len(gone) + len(came) <= len(where) + len(cut):
                    built = materializer.moved(base, pred.index, gone, came, model)
                else:
                    built = materializer.moved(start, pred.index, where, cut, model)
            latest[:] = [(cut, built)]
            return _total(built)

        passes = None if free_pass is None else (lambda pos: free_pass(pos, start))
        cut, cut_cost = best_cut(pred, cost, passes)
        return cut, cut_cost, cost

    if mode == "cost":
        # cheap predicates go where rule-based pushdown puts them, before the expensive ones are costed; their
        # positions are still costed below, for the decision log. A derived predicate is never held above
        # anything: it is added where it pays or not at all
        for pred in preds:
            pred.by_rule = (
                pred.kind != "derived" and model.predicate_cost(pred.form) < model.options.expensive_threshold
            )
            if pred.by_rule:
                pred.cut = deepest(pred.root)
    current = None
    if mode == "cost":
        current = materializer.build(placements_of(preds))
        current.total = model.total(current.root)
    for pred in preds:
        if mode == "cost" and fallback_from is None and over_budget():
            fallback_from = pred.index
        if mode == "always" or fallback_from is not None:
            pred.cut = deepest(pred.root) if pred.kind != "derived" or mode == "always" else []
            continue
        assert current is not None
        cut, cut_cost, cost = best_at(pred, current)
        if pred.by_rule:
            continue
        if pred.kind == "derived":
            absent = cost([])
            absent_costs[pred.index] = absent
            pred.cost_with = cut_cost
            # a derived predicate is only worth adding when it strictly lowers the cost
            if not cut_cost < absent - _EPS * max(1.0, absent):
                cut = []
        current = materializer.moved(current, pred.index, pred.cut, cut, model)
        pred.cut = cut
    if mode == "cost" and fallback_from is None:
        # a second look for predicates that stopped above a legal position: decided before the predicates
        # placed after them, they may find going lower pays now
        assert current is not None
        for pred in preds:
            if (
                pred.kind == "derived"
                or pred.by_rule
                or not any(pos.below and pos.stop is None for pos in pred.cut)
                or over_budget()
            ):
                continue
            cut, _, _ = best_at(pred, current)
            current = materializer.moved(current, pred.index, pred.cut, cut, model)
            pred.cut = cut
    return absent_costs, fallback_from


def _total(built: Built) -> float:
    assert built.total is not None, "costed by Materializer.moved"
    return built.total
