"""After the passes: the decision log with the benefit model's numbers, estimates, warnings, cost tables.

An operator's r describes the operator alone, so it is read off the plan as
written, where no moved predicate has been merged into it yet; operators only
the rewrite has fall back to the rewritten plan.
"""

from __future__ import annotations

from typing import Any

from costmodel.cost import CostModel, NodeCost
from costmodel.expr import column_ids
from costmodel.kinds.registry import kind_of
from costmodel.options import Options
from costmodel.passes.work import Work
from costmodel.plan import Filter, Join, output_fields
from costmodel.positions import ON, SCAN, Position, Pred
from costmodel.reasons import Reason
from costmodel.render import to_sql
from costmodel.result import OptimizeResult
from costmodel.rounding import rounded


def report(work: Work, before: list[NodeCost]) -> OptimizeResult:
    """The result of the passes in ``work``; ``before`` is the cost table of the plan as written."""
    model, options, preds = work.model, work.options, work.preds
    assert work.final is not None and work.scan_access is not None, "rewrite runs first"
    after = model.table(work.final)
    reporter = Reporter(model, {**{c.id: c for c in after}, **{c.id: c for c in before}}, options)
    reporter.final = {c.id: c for c in after}
    decisions = list(work.fixed)
    estimates: list[dict[str, Any]] = []
    for pred in preds:
        costed = work.fallback_from is None or pred.index < work.fallback_from
        text = to_sql(pred.form)  # once: a 20,000-term OR takes a tenth of a second to spell
        decisions.extend(reporter.decisions(pred, text, options.mode, work.absent.get(pred.index), costed))
        estimate = model.estimator.estimate(pred.form)
        entry = {"predicate": text, **estimate.to_wire()}
        if pred.kind == "derived":
            entry["derived"] = pred.derived_reason
        estimates.append(entry)
    decisions.extend(work.scan_access.decisions)
    warnings = list(model.warnings)
    if work.fallback_from is not None:
        warnings.append(
            f"the plan has too many predicates to cost them all: {len(preds) - work.fallback_from} of {len(preds)} "
            "were placed as deep as legal without costing"
        )
    for rewrite in work.rewrites:
        if rewrite["rule"] == "never_true":
            warnings.append(f"{rewrite['predicate']} is never true: the query returns no rows")
    return OptimizeResult(
        work.final,
        work.plan,
        decisions,
        estimates,
        before,
        after,
        work.rewrites,
        warnings,
        model.estimator.estimate,
        [r.to_wire() for r in work.scan_access.reports],
    )


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else 1.0


class Reporter:
    """The decision log: per predicate, per operator on its way down, the benefit model's numbers."""

    def __init__(self, model: CostModel, after: dict[str, NodeCost], options: Options):
        self.model = model
        self.after = after
        self.options = options
        #: the rewritten plan's rows alone: what a predicate pulled up past an operator sees there
        self.final: dict[str, NodeCost] = {}

    def numbers(self, pos: Position, side: int | None, final: bool = False) -> dict[str, Any]:
        node = pos.node
        row = (self.final if final else self.after).get(node.id)
        est = self.model.estimator.estimate(pos.form)
        s = est.selectivity
        c = self.model.predicate_cost(pos.form)
        if row is None:
            return {}
        # a filter's k is its predicates' short-circuit cost; every set operation costs as a union
        k = row.k if isinstance(node, Filter) else self.options.k(kind_of(node).name)
        rows_in = row.inputs[side] if side is not None and side < len(row.inputs) else row.rows_in
        r = _ratio(row.rows_out, rows_in)
        p = 1 - s
        r1 = k / c if c > 0 else float("inf")
        out = {
            "p": rounded(p, 6),
            "r": rounded(r, 6),
            "r1": rounded(r1, 6),
            "lhs": rounded(1 - r, 6),
            "rhs": rounded(p * r1, 6),
            "selectivity": rounded(s, 6),
            "interval": [rounded(est.low, 6), rounded(est.high, 6)],
            "source": est.source,
        }
        # p ranges over [1 - high, 1 - low]: if the inequality holds at one end and not the other,
        # the estimate cannot settle this decision
        holds_low = 1 - r <= (1 - est.high) * r1 + 1e-12
        holds_high = 1 - r <= (1 - est.low) * r1 + 1e-12
        if holds_low != holds_high:
            out["uncertain"] = True
        if pos.cost_here is not None:
            out["cost_if_kept"] = rounded(pos.cost_here, 4)
        if pos.best_below is not None:
            out["cost_if_pushed"] = rounded(pos.best_below, 4)
        return out

    def decisions(
        self, pred: Pred, text: str, mode: str, absent_cost: float | None, costed: bool = True
    ) -> list[dict[str, Any]]:
        """``pred``'s decision rows; ``text`` is its form spelled (``to_sql(pred.form)``)."""
        out: list[dict[str, Any]] = []
        in_cut = {id(p) for p in pred.cut}
        on_path = _on_path(pred.root, in_cut)

        if pred.kind == "derived":
            entry: dict[str, Any] = {
                "predicate": text,
                "operator": pred.via,
                "action": "pushed" if pred.cut else "kept",
                "reason": pred.derived_reason if pred.cut else Reason.DERIVED_NOT_BENEFICIAL,
            }
            if absent_cost is not None:
                entry["cost_without"] = rounded(absent_cost, 4)
            if pred.cost_with is not None:
                entry["cost_with"] = rounded(pred.cost_with, 4)
            out.append(entry)
            if not pred.cut:
                return out

        if pred.robust is not None:
            rows = self._decisions(pred, text, mode, costed, in_cut, on_path, out)
            for row in rows:
                row["uncertain"] = True
                row["robust"] = pred.robust
            return rows
        return self._decisions(pred, text, mode, costed, in_cut, on_path, out)

    def _decisions(
        self,
        pred: Pred,
        text: str,
        mode: str,
        costed: bool,
        in_cut: set[int],
        on_path: set[int],
        out: list[dict[str, Any]],
    ) -> list[dict[str, Any]]:
        start = pred.root
        if pred.written is not None:
            out.extend(self.pulled_up(pred, in_cut))
            if id(pred.written) not in on_path:
                return out
            start = pred.written
        stack = [start]  # pre-order, with an explicit stack: a predicate may travel 10,000 levels
        while stack:
            pos = stack.pop()
            if pos.kind == SCAN or pos.form_from_where:
                continue
            side = pos.entered_child() if isinstance(pos.node, Join) else None
            entry = {"predicate": text if pos.form is pred.form else to_sql(pos.form), "operator": pos.node.id}
            if id(pos) in in_cut:
                if pos.stop is not None:
                    entry.update(action="blocked", reason=pos.stop.reason, detail=pos.stop.detail)
                    out.append(entry)
                    continue
                if not pos.below:
                    continue
                entry.update(action="kept", reason=Reason.MODE_NEVER if mode == "never" else Reason.NOT_BENEFICIAL)
                entry.update(self.numbers(pos, side))
                out.append(entry)
                continue
            numbers = self.numbers(pos, side)
            if pos.below and pos.below[0].kind == ON and pos.below[0].form_from_where:
                reason = Reason.INTO_JOIN_CONDITION
            elif mode == "always":
                reason = Reason.MODE_ALWAYS
            elif not costed:
                reason = Reason.NOT_COSTED
            elif pos.below and pos.below[0].kind == SCAN:
                reason = Reason.INTO_SCAN
            elif pred.by_rule and numbers.get("cost_if_pushed", 0) > numbers.get("cost_if_kept", float("inf")) + 1e-9:
                reason = Reason.CHEAP_PREDICATE  # the model alone would keep it: rule-based pushdown decided
            else:
                reason = (
                    Reason.BENEFICIAL
                    if numbers.get("lhs", 0) <= numbers.get("rhs", 0) + 1e-12
                    else Reason.LOWER_TOTAL_COST
                )
            entry.update(action="pushed", reason=reason)
            entry.update(numbers)
            out.append(entry)
            stack.extend(child for child in reversed(pos.below) if id(child) in on_path)
        return out

    def pulled_up(self, pred: Pred, in_cut: set[int]) -> list[dict[str, Any]]:
        """One row per operator the predicate rose past, from where the query wrote it up to where it ends (none
        when it ends there or lower)."""
        path: list[Position] = []  # the region's root down to where the query wrote the predicate
        pos = pred.root
        while pos is not pred.written:
            path.append(pos)
            pos = pos.below[0]
        ends = next((i for i, p in enumerate(path) if id(p) in in_cut), None)
        if ends is None:
            return []
        rows: list[dict[str, Any]] = []
        text = to_sql(path[ends].form)  # as it stands where it ends, above each operator it passed
        for pos in reversed(path[ends:]):  # the lowest operator passed first
            numbers = self.numbers(pos, pos.entered_child() if isinstance(pos.node, Join) else None, final=True)
            holds = numbers.get("lhs", 0) > numbers.get("rhs", 0) + 1e-12
            reason = Reason.BENEFICIAL if holds else Reason.LOWER_TOTAL_COST
            row = {"predicate": text, "operator": pos.node.id, "action": "pulled_up", "reason": reason, **numbers}
            carried = self.model.carried.get(pos.node.id, frozenset()) & column_ids(pred.form)
            if carried:  # the query projects the column away here: it is carried up (costmodel.carry)
                row["carried_columns"] = sorted(f.name for f in output_fields(pos.node) if f.cid in carried)
            rows.append(row)
        return rows


def _on_path(root: Position, in_cut: set[int]) -> set[int]:
    """Positions of the region that are in the cut or above one (ids), found in one bottom-up pass."""
    order: list[Position] = []
    stack = [root]
    while stack:
        pos = stack.pop()
        order.append(pos)
        stack.extend(pos.below)
    marked: set[int] = set()
    for pos in reversed(order):  # children before parents
        if id(pos) in in_cut or any(id(b) in marked for b in pos.below):
            marked.add(id(pos))
    return marked
