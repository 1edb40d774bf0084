"""Decisions that hold up against what is not known: a predicate held (or pulled up) by cost against the interval of
its own selectivity.

Placement decides on the point estimate. Every estimate also has an interval (a sample's confidence interval, a
statistic's error, ``[0, 1]`` for a documented default). Where the decision flips inside that interval, the point
estimate cannot settle it, so the choice is made on the worst case: the plan is costed with the predicate's
selectivity at each end of its interval, once where placement put it and once where rule-based pushdown would,
and the placement whose largest excess over the better of the two (its regret) is smaller wins; a tie goes to
rule-based pushdown, the engine's own choice. The decision log says so (``robust``).
"""

from __future__ import annotations

from typing import Any

from costmodel.cost import CostModel
from costmodel.estimate import Estimator
from costmodel.estimate_types import SelectivityEstimate
from costmodel.expr import Call, Expr, Subquery
from costmodel.materialize import placements_of
from costmodel.passes.work import Work
from costmodel.plan import Node
from costmodel.positions import Pred, deepest, iter_region
from costmodel.rounding import rounded

#: an interval narrower than this is a point
_WIDTH = 1e-9


class _Fixed:
    """A selectivity source that answers one predicate's forms with a fixed selectivity (a what-if)."""

    name = "what_if"

    def __init__(self, forms: list[Expr], selectivity: float) -> None:
        self.forms = forms
        self.selectivity = selectivity

    def estimate(self, predicate: Expr, columns: Any) -> SelectivityEstimate | None:
        if any(predicate is form or predicate == form for form in self.forms):
            s = self.selectivity
            return SelectivityEstimate(s, s, s, self.name)
        return None


def robust_placement(work: Work, pred: Pred) -> dict[str, Any] | None:
    """Where ``pred``'s decision to stay above rule-based pushdown's place flips inside its selectivity interval:
    the cut with the smaller worst-case loss (``pred.cut`` is set to it) and the figures; None where it does not
    flip (or ``pred`` is where rule-based pushdown puts it)."""
    rule = deepest(pred.root)
    chosen = list(pred.cut)
    if [id(p) for p in rule] == [id(p) for p in chosen]:
        return None
    estimate = work.model.estimator.estimate(pred.form)
    if estimate.high - estimate.low < _WIDTH:
        return None
    forms = [pos.form for pos in iter_region(pred.root)]
    ends = (estimate.low, estimate.high)
    plans: dict[str, Node] = {}  # the two placements' plans, built once for both ends
    for name, cut in (("chosen", chosen), ("rule", rule)):
        pred.cut = cut
        plans[name] = work.materializer().build(placements_of(work.preds)).root
    pred.cut = chosen
    totals: dict[tuple[str, float], float] = {}
    for s in ends:
        what_if = _what_if(work, forms, s)  # one model per end: the two plans share every node off the predicate's way
        for name in ("chosen", "rule"):
            totals[(name, s)] = what_if.total(plans[name])
    wins = [totals[("chosen", s)] <= totals[("rule", s)] for s in ends]
    if all(wins) or not any(wins):
        return None
    regret = {
        name: max(totals[(name, s)] - min(totals[("chosen", s)], totals[("rule", s)]) for s in ends)
        for name in ("chosen", "rule")
    }
    pick = "chosen" if regret["chosen"] < regret["rule"] else "rule"
    pred.cut = chosen if pick == "chosen" else rule
    return {
        "interval": [rounded(estimate.low, 6), rounded(estimate.high, 6)],
        "held": {
            "cost_at_low": rounded(totals[("chosen", ends[0])], 4),
            "cost_at_high": rounded(totals[("chosen", ends[1])], 4),
            "worst_loss": rounded(regret["chosen"], 4),
        },
        "rule_based": {
            "cost_at_low": rounded(totals[("rule", ends[0])], 4),
            "cost_at_high": rounded(totals[("rule", ends[1])], 4),
            "worst_loss": rounded(regret["rule"], 4),
        },
        "picked": "held" if pick == "chosen" else "rule_based",
    }


def _what_if(work: Work, forms: list[Expr], selectivity: float) -> CostModel:
    """A cost model that gives the predicate's forms the selectivity ``selectivity`` (the others as estimated).
    An estimate depends on the node and the ones below it only, so one model costs both placements."""
    model = work.model
    return model.what_if(_WhatIf(model.estimator, forms, selectivity))


class _WhatIf(Estimator):
    """``known``'s chain with one predicate's forms answered first at a fixed selectivity. A predicate holding
    none of the forms gets what ``known`` (the same sources over the same columns) gave it, so it is read off
    ``known`` rather than estimated again; one holding a form, alone or inside AND, OR or NOT, goes through the
    chain."""

    def __init__(self, known: Estimator, forms: list[Expr], selectivity: float) -> None:
        super().__init__(known.columns, (_Fixed(forms, selectivity), *known.sources))
        self.known = known
        #: each form once (most positions of a region hold the predicate's own form object)
        self.forms = list({id(form): form for form in forms}.values())

    def estimate(self, predicate: Expr) -> SelectivityEstimate:
        return super().estimate(predicate) if self._holds_form(predicate) else self.known.estimate(predicate)

    def _holds_form(self, predicate: Expr) -> bool:
        """Whether a form is ``predicate`` or a part of it (compared only with parts of its own type: an equal
        expression has the same type)."""
        stack: list[Expr] = [predicate]
        while stack:
            node = stack.pop()
            for form in self.forms:
                if node is form or (type(node) is type(form) and node == form):
                    return True
            if isinstance(node, (Call, Subquery)):
                stack.extend(node.args)
        return False


class _AtEnd(Estimator):
    """Every predicate, compound ones too, at one end of the interval ``known`` gives it. ``known`` has already
    folded, hashed and asked its sources for each predicate of the plans, so this what-if does none of it again
    (a constant predicate's interval is its one value, so folding it again would give the same)."""

    def __init__(self, known: Estimator, end: str) -> None:
        super().__init__(known.columns, ())
        self.known = known
        self.end = end

    def estimate(self, predicate: Expr) -> SelectivityEstimate:
        known = self.known.estimate(predicate)
        s = known.low if self.end == "low" else known.high
        return SelectivityEstimate(s, s, s, "what_if")


def savings_interval(work: Work, ours: Node, baseline: Node) -> tuple[float, float]:
    """The savings of ``ours`` against ``baseline`` with every selectivity at the low end of its interval, at the
    high end, and at its estimate: the smallest and the largest of the three. Not a confidence interval in the
    statistical sense (the ends are not joint probabilities): the range the estimates' own intervals allow."""
    model = work.model
    found = [_savings(model.total(baseline), model.total(ours))]
    for end in ("low", "high"):
        what_if = model.what_if(_AtEnd(model.estimator, end))
        found.append(_savings(what_if.total(baseline), what_if.total(ours)))
    return rounded(min(found), 6), rounded(max(found), 6)


def _savings(baseline: float, ours: float) -> float:
    return 0.0 if baseline <= 0 else 1 - ours / baseline
