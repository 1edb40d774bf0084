"""``optimize(plan, catalog, options) -> OptimizeResult``: the engine's one entry point.

It runs the passes of ``costmodel.passes.PIPELINE`` in order (normalize,
legality, outer joins, inference, placement, rewrite) and then reports: the
rewritten plan, the decision log with the benefit model's numbers per
operator, estimates, cost tables, EXPLAIN.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from costmodel.catalog import Catalog, catalog_from_wire
from costmodel.cost import CostModel, NodeCost, column_infos
from costmodel.estimate import DEFAULT_SOURCES, Estimator, SelectivitySource
from costmodel.estimate_functions import with_function_samples
from costmodel.estimate_live import ndv_drops
from costmodel.expr import Expr, Subquery, column_ids, has_subquery, transform
from costmodel.join_order import catalyst_join_order
from costmodel.materialize import deepest_placements
from costmodel.options import Options, options_from_wire
from costmodel.passes import PIPELINE, Work
from costmodel.passes.report import report
from costmodel.passes.rewrite import MINTED_IDS, built_plan
from costmodel.plan import (
    Distinct,
    Node,
    children,
    map_expressions,
    node_expressions,
    open_memos,
    output_fields,
    plan_memo,
    walk_plan,
    with_children,
)
from costmodel.result import MODEL_VERSION, FullParts, OptimizeResult
from costmodel.robust import savings_interval
from costmodel.scan_access import ScanAccess
from costmodel.unique_ids import unique_node_ids
from costmodel.wire import plan_from_wire


def _tracked_columns(plan: Node) -> frozenset[int]:
    """Columns whose NDV can matter: every column an expression reads, and what a distinct compares."""
    out: set[int] = set()
    for node in walk_plan(plan):
        for expr in node_expressions(node):
            out |= column_ids(expr)
        if isinstance(node, Distinct):
            out.update(f.cid for f in output_fields(node))
    return frozenset(out)


def optimize(
    plan: Node,
    catalog: Catalog,
    options: Options | None = None,
    sources: tuple[SelectivitySource, ...] | None = None,
    baseline: bool = False,
) -> OptimizeResult:
    """Decide where every filter goes: the passes of ``PIPELINE``, then the report.

    ``baseline``: also cost the plan rule-based pushdown would run (mode ``always``: every predicate as deep
    as legal), into ``OptimizeResult.baseline_total``; the service states savings against it.
    """
    opts = options or Options()
    if MINTED_IDS.get() is None:  # the outermost call: subqueries and the outer plan share minted ids
        token = MINTED_IDS.set(set())
        try:
            with plan_memo():
                return _optimize(plan, catalog, opts, sources, baseline)
        finally:
            MINTED_IDS.reset(token)
    with plan_memo():
        return _optimize(plan, catalog, opts, sources, baseline)


def _optimize(
    plan: Node, catalog: Catalog, options: Options, sources: tuple[SelectivitySource, ...] | None, baseline: bool
) -> OptimizeResult:
    # decided on the join order the engine runs; mode never reports on the plan as written and changes nothing
    ordered = catalyst_join_order(plan) if options.mode != "never" else plan
    decided, inner_decisions = _optimize_subqueries(ordered, catalog, options, sources)
    work, before = _run_passes(decided, catalog, options, sources)
    result = report(work, before)
    result.decisions.extend(inner_decisions)
    # a plan without subqueries comes back as the same object (compared with the plan in join order: reordering
    # repeats no id, so only a subquery's copies call for ``unique_node_ids``)
    result.subqueries = decided is not ordered
    result.written = plan
    # in mode always, or without a kept decision, every predicate went as deep as legal: the plan is the
    # rule-based one
    differs = options.mode != "always" and (
        any(d.get("action") in ("kept", "pulled_up") for d in result.decisions)
        or any(r.get("rule") == "conjunct_order" for r in result.rewrites)
    )
    if not differs:
        result.baseline_total = result.total_after if baseline else None
        return result
    # mode cost: the rule-based plan is built once, for its total and for the savings' interval
    rule_plan = _rule_based_plan(work) if options.mode == "cost" else None
    rule_based = work.model.total(rule_plan) if rule_plan is not None else _rule_based_total(work, plan, sources)
    if options.mode == "cost" and result.total_after > rule_based + _EPS * max(1.0, rule_based):
        return _rule_based_instead(plan, catalog, options, sources, result.total_after, baseline)
    if baseline:
        result.baseline_total = rule_based
        if rule_plan is not None and work.final is not None:
            result.savings_interval = savings_interval(work, work.final, rule_plan)
    return result


#: relative tolerance when comparing two plan totals
_EPS = 1e-9


def _rule_based_instead(
    plan: Node,
    catalog: Catalog,
    options: Options,
    sources: tuple[SelectivitySource, ...] | None,
    priced: float,
    baseline: bool,
) -> OptimizeResult:
    """Rule-based pushdown's answer, for a cost-based placement the model itself prices above it (placement
    decides one predicate at a time, so it can end above the rule-based plan): never an answer worse than what
    the engine would run without us."""
    result = _optimize(plan, catalog, replace(options, mode="always"), sources, False)
    if baseline:
        result.baseline_total = result.total_after
    result.warnings.append(
        f"placement by cost came to {priced:,.0f}, above rule-based pushdown's {result.total_after:,.0f}: "
        "every predicate is placed as rule-based pushdown places it"
    )
    return result


def _run_passes(
    plan: Node, catalog: Catalog, options: Options, sources: tuple[SelectivitySource, ...] | None
) -> tuple[Work, list[NodeCost]]:
    """The passes of ``PIPELINE`` over ``plan`` (its subqueries decided), and the cost table of ``plan``."""
    chain = with_function_samples(sources or DEFAULT_SOURCES, options.functions)
    estimator = Estimator(column_infos(plan, catalog), chain)
    model = CostModel(catalog, options, estimator, _tracked_columns(plan))
    model.drop_unread(ndv_drops(plan, []))  # NDVs nothing above reads stay out of estimates (placement: again)
    before = model.table(plan)
    work = Work(plan, catalog, options, model)
    for _, run in PIPELINE:
        run(work)
    return work, before


def _rule_based_total(work: Work, plan: Node, sources: tuple[SelectivitySource, ...] | None) -> float:
    """What ``optimize`` in mode ``always`` reports as the rewritten plan's cost, without its report.

    Normalize, legality, outer joins and inference do not depend on the mode (``never`` skips the last two), so
    after a run in mode ``cost`` only placement and the rewrite differ: every predicate, derived ones included,
    goes to the leaves of its region, and that plan is built and costed with the run's own predicates and
    estimates. Subqueries, decided by cost in ``work``, cost the same per row whatever their plan. From mode
    ``never`` the passes are run again in mode ``always``.
    """
    if work.options.mode != "cost":
        return _rule_based_rerun(plan, work.catalog, work.options, sources)
    return work.model.total(_rule_based_plan(work))


def _rule_based_plan(work: Work) -> Node:
    """After a run in mode ``cost``: the plan with every predicate, derived ones included, at the leaves of its
    region, built from the run's own predicates (``_rule_based_total``)."""
    return built_plan(work, deepest_placements(work.preds), ScanAccess(work.catalog, work.model))


def _rule_based_rerun(
    plan: Node, catalog: Catalog, options: Options, sources: tuple[SelectivitySource, ...] | None
) -> float:
    """``_rule_based_total`` by running the passes in mode ``always``: the plan already read, and its estimates
    and texts remembered (``plan_memo``), are used again."""
    always = replace(options, mode="always")
    decided, _ = _optimize_subqueries(plan, catalog, always, sources)
    work, _ = _run_passes(decided, catalog, always, sources)
    assert work.final is not None, "rewrite runs last"
    return work.model.total(work.final)


def _optimize_subqueries(
    plan: Node, catalog: Catalog, options: Options, sources: tuple[SelectivitySource, ...] | None
) -> tuple[Node, list[dict[str, Any]]]:
    """Each scalar, IN or EXISTS subquery's own plan decided first, its decisions listed with the outer ones;
    ``plan`` itself when it holds no subquery.

    TPC-H q11's HAVING subquery then puts ``n_name = 'GERMANY'`` on its nation scan and q02's correlated
    subquery ``r_name = 'EUROPE'`` on its region scan, as Catalyst does. A correlated subquery's outer
    columns are produced by no operator inside it, so predicates reading them stay where they are legal.
    """
    decisions: list[dict[str, Any]] = []
    fix = partial(_with_subqueries_decided, partial(_decided, catalog, options, sources, decisions))
    rebuilt: dict[str, Node] = {}
    for node in reversed(list(walk_plan(plan))):  # children before parents
        kids = tuple(rebuilt[k.id] for k in children(node))
        # compared by identity: a node without a subquery below stays the same object, and nothing is
        # compared field by field (a tuple of nodes compared with == compares whole subtrees)
        new = map_expressions(node, fix) if any(has_subquery(e) for e in node_expressions(node)) else node
        if any(a is not b for a, b in zip(kids, children(node), strict=True)):
            new = with_children(new, kids)
        rebuilt[node.id] = new
    return rebuilt[plan.id], decisions


def _decided(
    catalog: Catalog,
    options: Options,
    sources: tuple[SelectivitySource, ...] | None,
    decisions: list[dict[str, Any]],
    expr: Expr,
) -> Expr | None:
    """A subquery with its plan decided (its decisions added to ``decisions``); None for other expressions."""
    if isinstance(expr, Subquery):
        result = optimize(expr.plan, catalog, options, sources)
        decisions.extend(result.decisions)
        return replace(expr, plan=result.plan)
    return None


def _with_subqueries_decided(decide: Callable[[Expr], Expr | None], expr: Expr) -> Expr:
    """``expr`` with each subquery in it replaced by ``decide``'s result (``expr`` itself when it has none)."""
    return transform(expr, decide) if has_subquery(expr) else expr


def optimize_wire(
    plan: Any,
    catalog: Any = None,
    options: Any = None,
    sources: tuple[SelectivitySource, ...] | None = None,
    baseline: bool = False,
) -> dict[str, Any]:
    """Wire in, wire out: the library form of ``POST /optimize``. Raises ``PlanError``.

    ``sources``: the estimator's chain (default ``DEFAULT_SOURCES``); ``baseline``: the answer's ``cost`` also
    has ``baseline``, what rule-based pushdown's plan costs (see ``optimize``).
    """
    brief, parts = optimize_wire_brief(plan, catalog, options, sources, baseline)
    return parts.completed(brief)


def optimize_wire_brief(
    plan: Any,
    catalog: Any = None,
    options: Any = None,
    sources: tuple[SelectivitySource, ...] | None = None,
    baseline: bool = False,
) -> tuple[dict[str, Any], FullParts]:
    """``optimize_wire``'s answer without the parts only a full answer carries, and those parts, rendered when
    asked for (``FullParts``): a caller that sends a summary does not make the EXPLAIN trees or the per-node
    cost tables."""
    cat = catalog_from_wire(catalog)
    opts = options_from_wire(options)
    with plan_memo():
        node = plan_from_wire(plan, cat, functions=opts.functions)
        result = optimize(node, cat, opts, sources, baseline)
        out = result.to_wire_brief()
        parts = result.full_parts(open_memos())
    if result.subqueries:  # only copies of a subquery's plan repeat ids: the walk is skipped without one
        unique_node_ids(out.get("plan"))
    return out, parts


__all__ = ["MODEL_VERSION", "FullParts", "OptimizeResult", "optimize", "optimize_wire", "optimize_wire_brief"]
