"""``optimize(plan, catalog, options) -> OptimizeResult``: the engine's one entry point.

Steps, each in its own module:

1. strip movable predicates out of filters and join conditions, leaving a
   skeleton (``rules.split_conjunctions``; fixed conjuncts stay put);
2. simplify outer joins that a WHERE predicate rejects (``rules.outer_to_inner``);
3. derive implied predicates across join keys and from ORs
   (``rules.infer_join_keys``, ``rules.or_derivation``);
4. place every predicate where the plan costs least (``placement``), or
   deepest (mode ``always``), or where it was (mode ``never``);
5. report: the rewritten plan, the decision log with the benefit model's
   numbers per operator, estimates, cost tables, EXPLAIN.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from costmodel.catalog import Catalog, catalog_from_wire
from costmodel.cost import CostModel, NodeCost, column_infos, savings
from costmodel.estimate import DEFAULT_SOURCES, Estimator, SelectivitySource
from costmodel.explain import explain
from costmodel.expr import (
    FALSE,
    Expr,
    Subquery,
    and_,
    can_raise,
    column_ids,
    conjuncts,
    has_aggregate_or_window,
    has_subquery,
    is_deterministic,
    to_sql,
    transform,
)
from costmodel.fold import Truth, constant_truth
from costmodel.options import Options, options_from_wire
from costmodel.placement import (
    ABOVE,
    ON,
    SCAN,
    Built,
    Materializer,
    Position,
    Pred,
    build_region,
    iter_region,
    place,
    placements_of,
)
from costmodel.plan import (
    OP_NAMES,
    Distinct,
    Filter,
    IdAllocator,
    Join,
    Node,
    children,
    map_expressions,
    node_expressions,
    output_fields,
    walk_plan,
    with_children,
)
from costmodel.rules.infer_join_keys import infer_across_keys
from costmodel.rules.join import ON_SIDES, WHERE_SIDES, side_of
from costmodel.rules.or_derivation import derive_per_side
from costmodel.rules.outer_to_inner import simplify_outer_join
from costmodel.rules.split_conjunctions import classify_conjuncts, fold_conjunct
from costmodel.scan_access import ScanAccess
from costmodel.wire import plan_from_wire, plan_to_wire

MODEL_VERSION = "1"
MAX_DERIVED = 200
#: conjunct estimations placement may spend before it places the rest by rule (deepest legal)
WORK_BUDGET = 400_000


@dataclass
class OptimizeResult:
    plan: Node
    original: Node
    decisions: list[dict[str, Any]]
    estimates: list[dict[str, Any]]
    before: list[NodeCost]
    after: list[NodeCost]
    rewrites: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    estimate: Callable[[Expr], Any] | None = None
    scans: list[dict[str, Any]] = field(default_factory=list)

    @property
    def total_before(self) -> float:
        return self.before[0].subtree_cost if self.before else 0.0

    @property
    def total_after(self) -> float:
        return self.after[0].subtree_cost if self.after else 0.0

    def to_wire(self) -> dict[str, Any]:
        before = {c.id: c for c in self.before}
        after = {c.id: c for c in self.after}
        return {
            "plan": plan_to_wire(self.plan),
            "decisions": self.decisions,
            "estimates": self.estimates,
            "cost": {
                "before": {"total": round(self.total_before, 4), "nodes": [c.to_wire() for c in self.before]},
                "after": {"total": round(self.total_after, 4), "nodes": [c.to_wire() for c in self.after]},
                "savings": savings(self.total_before, self.total_after),
            },
            "explain": {
                "before": explain(self.original, before, estimate=self.estimate),
                "after": explain(self.plan, after, estimate=self.estimate),
            },
            "rewrites": self.rewrites,
            "scans": self.scans,
            "warnings": self.warnings,
            "model_version": MODEL_VERSION,
        }


# ---------------------------------------------------------------- step 1: strip


@dataclass
class _Stripped:
    skeleton: Node
    preds: list[Pred]
    fixed: list[dict[str, Any]]
    rewrites: list[dict[str, Any]]


def _strip(plan: Node) -> _Stripped:
    preds: list[Pred] = []
    fixed: list[dict[str, Any]] = []
    rewrites: list[dict[str, Any]] = []

    def add(form: Expr, kind: str, node: Node, pos_kind: str, origin_filter: str | None) -> None:
        root = Position(node, pos_kind, form)
        preds.append(Pred(len(preds), form, kind, root, origin_filter))

    def visit(node: Node) -> Node:
        kids = [visit(child) for child in children(node)]
        if isinstance(node, Filter):
            below = kids[0]
            stay: list[Expr] = []
            movable: list[Expr] = []
            for part, reason in classify_conjuncts(node.predicate):
                if reason is not None:
                    stay.append(part)
                    fixed.append(
                        {"predicate": to_sql(part), "operator": below.id, "action": "blocked", "reason": reason}
                    )
                    continue
                folded = fold_conjunct(part)
                if folded is None:
                    rewrites.append({"rule": "remove_always_true", "operator": node.id, "predicate": to_sql(part)})
                    continue
                if folded is FALSE and part is not FALSE:
                    rewrites.append(
                        {
                            "rule": "never_true",
                            "operator": node.id,
                            "predicate": to_sql(part),
                            "detail": "the predicate is never true: the result is empty",
                        }
                    )
                movable.append(folded)
            for part in movable:
                add(part, "where", below, ABOVE, node.id)
            if stay:
                return Filter(node.id, and_(stay), below)
            return below
        node = with_children(node, kids)
        if isinstance(node, Join) and node.on is not None:
            keep: list[Expr] = []
            for part in conjuncts(node.on):
                one_side = side_of(part, node) is not None and constant_truth(part) is not Truth.TRUE
                if one_side and is_deterministic(part) and not has_aggregate_or_window(part):
                    add(part, "on", node, ON, None)
                    continue
                keep.append(part)
                if one_side:
                    reason = "nondeterministic_predicate" if not is_deterministic(part) else "aggregate_in_predicate"
                    fixed.append(
                        {"predicate": to_sql(part), "operator": node.id, "action": "blocked", "reason": reason}
                    )
            node = replace(node, on=and_(keep) if keep else None)
        return node

    skeleton = visit(plan)
    return _Stripped(skeleton, preds, fixed, rewrites)


# ---------------------------------------------------------------- step 2: outer joins


def _replace_node(root: Node, node_id: str, new: Node) -> Node:
    if root.id == node_id:
        return new
    kids = children(root)
    if not kids:
        return root
    return with_children(root, [_replace_node(k, node_id, new) for k in kids])


def _find(root: Node, node_id: str) -> Node:
    for node in walk_plan(root):
        if node.id == node_id:
            return node
    raise KeyError(node_id)


def _rebind(preds: list[Pred], skeleton: Node, scan_pushdown: bool) -> None:
    """Point every predicate's root at the skeleton's current nodes and rebuild its region."""
    for pred in preds:
        node = _find(skeleton, pred.root.node.id)
        pred.root = build_region(Position(node, pred.root.kind, pred.root.form), scan_pushdown, pred.stop_at)


def _mark_guards(stripped: _Stripped, plan: Node) -> None:
    """A predicate that can raise may not pass where an earlier (lower) predicate or a join condition stood."""
    guarded_joins = {n.id for n in walk_plan(plan) if isinstance(n, Join) and n.on is not None}
    origins: list[str] = []
    for pred in stripped.preds:
        if can_raise(pred.form):
            pred.stop_at = frozenset(origins) | guarded_joins
        if pred.kind == "where":
            origins.append(pred.root.node.id)


def _simplify_outer_joins(stripped: _Stripped, options: Options) -> Node:
    skeleton = stripped.skeleton
    while True:
        _rebind(stripped.preds, skeleton, options.scan_pushdown)
        change = None
        for pred in stripped.preds:
            for pos in iter_region(pred.root):
                if pos.kind == ABOVE and pos.stop is not None and isinstance(pos.node, Join):
                    new_type = simplify_outer_join(pos.form, pos.node)
                    if new_type is not None:
                        change = (pos.node, new_type, pos.form)
                        break
            if change:
                break
        if change is None:
            return skeleton
        join, new_type, form = change
        stripped.rewrites.append(
            {
                "rule": "outer_to_inner",
                "operator": join.id,
                "from": join.type,
                "to": new_type,
                "predicate": to_sql(form),
                "detail": f"{to_sql(form)} is never true on the rows the {join.type} join pads with NULLs",
            }
        )
        skeleton = _replace_node(skeleton, join.id, replace(join, type=new_type))


# ---------------------------------------------------------------- step 3: derived predicates


def _derive(stripped: _Stripped, skeleton: Node, options: Options) -> None:
    preds = stripped.preds
    limit = len(preds) + MAX_DERIVED  # derived predicates are appended to the same list
    seen = {(p.root.node.id, p.root.kind, p.form) for p in preds}
    queue: list[Pred] = []

    def add(join: Join, side: int, form: Expr, reason: str) -> None:
        child = children(join)[side]
        key = (child.id, ABOVE, form)
        if key in seen or len(preds) >= limit:
            return
        seen.add(key)
        root = build_region(Position(child, ABOVE, form), options.scan_pushdown)
        preds.append(Pred(len(preds), form, "derived", root, None, reason, join.id))
        queue.append(preds[-1])

    # OR conditions that stay in a join's ON can still lend each side a filter
    for node in walk_plan(skeleton):
        if isinstance(node, Join) and node.on is not None:
            for part in conjuncts(node.on):
                for side, form in derive_per_side(part, node, ON_SIDES[node.type]):
                    add(node, side, form, "derived_from_or")

    queue.extend(preds)
    while queue:
        pred = queue.pop(0)
        for pos in iter_region(pred.root):
            if not isinstance(pos.node, Join) or pos.kind == SCAN:
                continue
            join = pos.node
            for side, form in infer_across_keys(pos.form, join):
                add(join, side, form, "inferred_from_join_keys")
            if pos.kind == ABOVE and pos.stop is not None and pos.stop.reason == "references_both_sides":
                for side, form in derive_per_side(pos.form, join, WHERE_SIDES[join.type]):
                    add(join, side, form, "derived_from_or")


# ---------------------------------------------------------------- step 5: report


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else 1.0


class _Reporter:
    def __init__(self, model: CostModel, after: dict[str, NodeCost], options: Options):
        self.model = model
        self.after = after
        self.options = options

    def numbers(self, pos: Position, side: int | None) -> dict[str, Any]:
        node = pos.node
        row = self.after.get(node.id)
        est = self.model.estimator.estimate(pos.form)
        s = est.selectivity
        c = self.model.predicate_cost(pos.form)
        if row is None:
            return {}
        # a filter's k is its predicates' short-circuit cost; every set operation costs as a union
        k = row.k if isinstance(node, Filter) else self.options.k(OP_NAMES[type(node)])
        rows_in = row.inputs[side] if side is not None and side < len(row.inputs) else row.rows_in
        r = _ratio(row.rows_out, rows_in)
        p = 1 - s
        r1 = k / c if c > 0 else float("inf")
        out = {
            "p": round(p, 6),
            "r": round(r, 6),
            "r1": round(r1, 6),
            "lhs": round(1 - r, 6),
            "rhs": round(p * r1, 6),
            "selectivity": round(s, 6),
            "interval": [round(est.low, 6), round(est.high, 6)],
            "source": est.source,
        }
        # p ranges over [1 - high, 1 - low]: if the inequality holds at one end and not the other,
        # the estimate cannot settle this decision
        holds_low = 1 - r <= (1 - est.high) * r1 + 1e-12
        holds_high = 1 - r <= (1 - est.low) * r1 + 1e-12
        if holds_low != holds_high:
            out["uncertain"] = True
        if pos.cost_here is not None:
            out["cost_if_kept"] = round(pos.cost_here, 4)
        if pos.best_below is not None:
            out["cost_if_pushed"] = round(pos.best_below, 4)
        return out

    def decisions(self, pred: Pred, mode: str, absent_cost: float | None, costed: bool = True) -> list[dict[str, Any]]:
        text = to_sql(pred.form)
        out: list[dict[str, Any]] = []
        in_cut = {id(p) for p in pred.cut}

        def on_path(pos: Position) -> bool:
            return id(pos) in in_cut or any(on_path(b) for b in pos.below)

        if pred.kind == "derived":
            entry = {
                "predicate": text,
                "operator": pred.via,
                "action": "pushed" if pred.cut else "kept",
                "reason": pred.derived_reason if pred.cut else "derived_not_beneficial",
            }
            if absent_cost is not None:
                entry["cost_without"] = round(absent_cost, 4)
            out.append(entry)
            if not pred.cut:
                return out

        def visit(pos: Position) -> None:
            if pos.kind == SCAN or pos.form_from_where:
                return
            side = pos.entered_child() if isinstance(pos.node, Join) else None
            entry: dict[str, Any] = {"predicate": to_sql(pos.form), "operator": pos.node.id}
            if id(pos) in in_cut:
                if pos.stop is not None:
                    entry.update(action="blocked", reason=pos.stop.reason, detail=pos.stop.detail)
                    out.append(entry)
                    return
                if not pos.below:
                    return
                entry.update(action="kept", reason="mode_never" if mode == "never" else "not_beneficial")
                entry.update(self.numbers(pos, side))
                out.append(entry)
                return
            numbers = self.numbers(pos, side)
            if pos.below and pos.below[0].kind == ON and pos.below[0].form_from_where:
                reason = "into_join_condition"
            elif mode == "always":
                reason = "mode_always"
            elif not costed:
                reason = "not_costed"
            elif pos.below and pos.below[0].kind == SCAN:
                reason = "into_scan"
            else:
                reason = "beneficial" if numbers.get("lhs", 0) <= numbers.get("rhs", 0) + 1e-12 else "lower_total_cost"
            entry.update(action="pushed", reason=reason)
            entry.update(numbers)
            out.append(entry)
            for child in pos.below:
                if on_path(child):
                    visit(child)

        visit(pred.root)
        return out


# ---------------------------------------------------------------- entry points


def _tracked_columns(plan: Node) -> frozenset[int]:
    """Columns whose NDV can matter: every column an expression reads, and what a distinct compares."""
    out: set[int] = set()
    for node in walk_plan(plan):
        for expr in node_expressions(node):
            out |= column_ids(expr)
        if isinstance(node, Distinct):
            out.update(f.cid for f in output_fields(node))
    return frozenset(out)


def _assign_filter_ids(preds: list[Pred], skeleton: Node) -> dict[str, str]:
    taken = {node.id for node in walk_plan(skeleton)}
    allocator = IdAllocator(taken)
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
    return ids


def optimize(
    plan: Node,
    catalog: Catalog,
    options: Options | None = None,
    sources: tuple[SelectivitySource, ...] | None = None,
) -> OptimizeResult:
    """Decide where every filter goes; see the module docstring for the steps."""
    options = options or Options()
    if sys.getrecursionlimit() < 20000:
        sys.setrecursionlimit(20000)
    plan, inner_decisions = _optimize_subqueries(plan, catalog, options, sources)
    estimator = Estimator(column_infos(plan, catalog), sources or DEFAULT_SOURCES)
    model = CostModel(catalog, options, estimator, _tracked_columns(plan))
    before = model.table(plan)

    stripped = _strip(plan)
    _mark_guards(stripped, plan)
    skeleton = stripped.skeleton
    if options.mode != "never":
        skeleton = _simplify_outer_joins(stripped, options)
        _derive(stripped, skeleton, options)
    else:
        _rebind(stripped.preds, skeleton, options.scan_pushdown)
        # report, do not rewrite: only the facts a caller should hear about stay
        stripped.rewrites[:] = [r for r in stripped.rewrites if r["rule"] == "never_true"]
    preds = stripped.preds

    materializer = Materializer(skeleton)

    def free_pass(pos: Position, built: Built) -> bool:
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

    absent, fallback_from = place(
        preds, options.mode, materializer, model.total, lambda: model.work > WORK_BUDGET, free_pass
    )

    scan_access = ScanAccess(catalog, model)
    if options.mode == "never":
        final = plan
    else:
        final = materializer.build(placements_of(preds), _assign_filter_ids(preds, skeleton)).root
        if options.scan_pushdown:
            final = scan_access.apply(final)
    after = model.table(final)
    # an operator's r describes the operator alone: read it off the original plan, where no moved
    # predicate has been merged into it yet; operators only the rewrite has fall back to the rewritten plan
    reporter = _Reporter(model, {**{c.id: c for c in after}, **{c.id: c for c in before}}, options)

    decisions = list(stripped.fixed) + inner_decisions
    estimates: list[dict[str, Any]] = []
    for pred in preds:
        costed = fallback_from is None or pred.index < fallback_from
        decisions.extend(reporter.decisions(pred, options.mode, absent.get(pred.index), costed))
        estimate = estimator.estimate(pred.form)
        entry = {"predicate": to_sql(pred.form), **estimate.to_wire()}
        if pred.kind == "derived":
            entry["derived"] = pred.derived_reason
        estimates.append(entry)
    decisions.extend(scan_access.decisions)
    warnings = list(model.warnings)
    if fallback_from is not None:
        warnings.append(
            f"the plan has too many predicates to cost them all: {len(preds) - fallback_from} of {len(preds)} "
            "were placed as deep as legal without costing"
        )
    for rewrite in stripped.rewrites:
        if rewrite["rule"] == "never_true":
            warnings.append(f"{rewrite['predicate']} is never true: the query returns no rows")
    return OptimizeResult(
        final,
        plan,
        decisions,
        estimates,
        before,
        after,
        stripped.rewrites,
        warnings,
        estimator.estimate,
        [report.to_wire() for report in scan_access.reports],
    )


CORRELATED = True


def _optimize_subqueries(
    plan: Node, catalog: Catalog, options: Options, sources: tuple[SelectivitySource, ...] | None
) -> tuple[Node, list[dict[str, Any]]]:
    """Each uncorrelated subquery's own plan decided first (TPC-H q11's HAVING subquery filters its own
    join); its decisions join the outer ones. A correlated subquery's plan reads outer columns that no
    operator inside it produces, so it stays as written."""
    decisions: list[dict[str, Any]] = []

    def inner(expr: Expr) -> Expr | None:
        if isinstance(expr, Subquery) and (CORRELATED or not expr.outer_refs):
            result = optimize(expr.plan, catalog, options, sources)
            decisions.extend(result.decisions)
            return replace(expr, plan=result.plan)
        return None

    def fix(expr: Expr) -> Expr:
        return transform(expr, inner) if has_subquery(expr) else expr

    rebuilt: dict[str, Node] = {}
    for node in reversed(list(walk_plan(plan))):  # children before parents
        kids = tuple(rebuilt[k.id] for k in children(node))
        new = map_expressions(node, fix)
        if kids != children(node):
            new = with_children(new, kids)
        rebuilt[node.id] = new
    return rebuilt[plan.id], decisions


def optimize_wire(plan: Any, catalog: Any = None, options: Any = None) -> dict[str, Any]:
    """Wire in, wire out: the library form of ``POST /optimize``. Raises ``PlanError``."""
    if sys.getrecursionlimit() < 20000:
        sys.setrecursionlimit(20000)
    cat = catalog_from_wire(catalog)
    opts = options_from_wire(options)
    node = plan_from_wire(plan, cat)
    return optimize(node, cat, opts).to_wire()


__all__ = ["OptimizeResult", "optimize", "optimize_wire"]
