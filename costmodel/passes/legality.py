"""Pass 2, legality verdicts: every position each predicate may legally take, and why it stops where it does.

Pure: nothing is rewritten. For each predicate a tree of positions
(``costmodel.positions.Position``) from the highest position it may rise to
down through each operator whose kind's rule lets it pass
(``costmodel.legality``), forking at set operations; where a rule refuses, the
position records the ``Blocked`` verdict with its reason.

Rising (mode ``cost``, for a predicate placement decides by cost): a predicate
written under an operator may go above it exactly when the same rule would let
it come back down to where the query wrote it, unchanged. Moving a filter
across an operator is the same equivalence read in either direction, so every
legality rule that guards pushing down also guards pulling up (outer joins'
NULL-padded sides, aggregates but on group keys, windows but on partition
keys, limits, set operations, non-deterministic projections and filters).
What the symmetry does not cover is errors: rows a predicate used to remove
reach the operators it rises past, so it never rises past one holding an
expression that can raise, and nothing rises in a plan where some predicate
can raise (it may be guarded by the one that would rise).

A predicate whose columns a projection above it drops may still rise past a
join: the projections between are widened to carry those columns up
(``costmodel.carry``), provided the operator above its highest position drops
them again, and the cost model charges the wider rows.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from costmodel.carry import PASSED, WIDENED, widen
from costmodel.cost import CostModel
from costmodel.expr import Column, Expr, column_ids, has_subquery, substitute, walk
from costmodel.expr_raise import can_raise
from costmodel.legality import cross
from costmodel.passes.work import Work
from costmodel.plan import (
    Aggregate,
    Distinct,
    Filter,
    Join,
    Node,
    Project,
    SetOp,
    children,
    node_expressions,
    output_cids,
    output_fields,
    replace_node,
    walk_plan,
    with_children,
)
from costmodel.positions import ABOVE, ON, Position, Pred, build_region, iter_region
from costmodel.rules import Blocked


def legality(work: Work) -> None:
    _rebind(work, work.require_skeleton())


def _rebind(work: Work, skeleton: Node) -> None:
    """Point every predicate's root at the skeleton's current nodes (raised where it pays to look) and rebuild its
    region."""
    may_rise = _may_rise(work)
    for pred in work.preds:
        if pred.origin is None:
            pred.origin = (pred.root.node.id, pred.root.kind, pred.root.form)
    skeleton = _carry_columns(work, skeleton, may_rise)
    by_id, parent_of = _maps(skeleton)
    for pred in work.preds:
        assert pred.origin is not None
        node_id, kind, form = pred.origin
        start = Position(by_id[node_id], kind, form)
        top = _raised(start, parent_of) if may_rise(pred) and _reducer_above(start.node, parent_of) else start
        pred.root = build_region(top, work.options.scan_pushdown, pred.stop_at)
        pred.written = None if top is start else _written(pred.root, start)


def _maps(skeleton: Node) -> tuple[dict[str, Node], dict[str, Node]]:
    """Every node of ``skeleton`` by id, and every node's parent by the node's id."""
    by_id: dict[str, Node] = {}
    parent_of: dict[str, Node] = {}
    for node in walk_plan(skeleton):
        by_id[node.id] = node
        for kid in children(node):
            parent_of[kid.id] = node
    return by_id, parent_of


def _carry_columns(work: Work, skeleton: Node, may_rise: Callable[[Pred], bool]) -> Node:
    """The skeleton widened wherever a predicate can rise past a join only by carrying up a column the query
    projects away (``costmodel.carry``); the cost model learns which operators carry which columns."""
    maps: tuple[dict[str, Node], dict[str, Node]] | None = None  # made again only after the skeleton changed
    for pred in work.preds:
        if not may_rise(pred) or pred.origin is None:
            continue
        by_id, parent_of = maps = maps or _maps(skeleton)
        node_id, kind, form = pred.origin
        if node_id not in by_id:
            continue
        found = _carried_rise(Position(by_id[node_id], kind, form), parent_of)
        if found is None:
            continue
        top_id, top, carried = found
        skeleton, maps = replace_node(skeleton, top_id, top), None
        for widened_id, cids in carried.items():
            work.model.carried[widened_id] = work.model.carried.get(widened_id, frozenset()) | cids
    work.skeleton = skeleton
    return skeleton


def _carried_rise(start: Position, parent_of: dict[str, Node]) -> tuple[str, Node, dict[str, frozenset[int]]] | None:
    """Where ``start``'s predicate rises past a join when the projections above it carry the columns it reads:
    the highest such node's id, the node rebuilt over the widened operators, and the columns each widened
    operator carries; None when rising needs no carried column, when it passes no join after carrying one, or
    when the carried column would reach an operator that does not name its columns (the query's output, a
    DISTINCT, a set operation) instead of a projection or an aggregate that drops it again."""
    node, form = start.node, start.form
    if start.kind == ON and not (isinstance(node, Join) and node.type in ("inner", "cross")):
        return None
    current: Node = node
    carried: dict[str, frozenset[int]] = {}
    best: tuple[str, Node, dict[str, frozenset[int]]] | None = None
    while (parent := parent_of.get(node.id)) is not None:
        if any(can_raise(expr) for expr in node_expressions(parent)):
            break
        if carried and not isinstance(parent, WIDENED + PASSED):
            break
        candidate = with_children(parent, [current if kid.id == node.id else kid for kid in children(parent)])
        missing = column_ids(form) - output_cids(candidate)
        if missing:
            have = [f for f in output_fields(current) if f.cid in missing]
            spelled = {e.cid: e for e in walk(form) if isinstance(e, Column) and e.cid in missing}
            widened = widen(candidate, have, spelled) if len(have) == len(missing) else None
            if widened is None:
                break
            candidate = widened
        up = _form_above(form, candidate)
        if up is None:
            break
        outcome = cross(up, candidate)
        if isinstance(outcome, Blocked) or len(outcome) != 1:
            break
        (crossing,) = outcome
        if children(candidate)[crossing.index] is not current or _unspelled(crossing.form) != _unspelled(form):
            break
        if missing:
            carried[parent.id] = frozenset(missing)
        node, current, form = parent, candidate, up
        if carried and isinstance(parent, Join):
            best = (node.id, current, dict(carried))
    if best is None or not _dropped_above(best[0], parent_of):
        return None
    return best


def _dropped_above(node_id: str, parent_of: dict[str, Node]) -> bool:
    """Whether the columns ``node_id`` emits pass only operators that keep them as they are until a projection
    or an aggregate names the columns it keeps."""
    while (parent := parent_of.get(node_id)) is not None:
        if isinstance(parent, (Project, Aggregate)):
            return True
        if not isinstance(parent, PASSED):
            return False
        node_id = parent.id
    return False


def _may_rise(work: Work) -> Callable[[Pred], bool]:
    """Which predicates may rise: in mode ``cost``, an expensive WHERE or join-condition conjunct
    (``_expensive_movable``), and only in a plan where no predicate can raise."""
    if work.options.mode != "cost" or not has_expensive_predicate(work):
        return _never
    if any(can_raise(p.form) for p in work.preds):
        return _never
    return partial(_expensive_movable, work.model, work.options.expensive_threshold)


def has_expensive_predicate(work: Work) -> bool:
    """Whether some predicate is one that may rise (``_expensive_movable``). Without one nothing rises and no
    column is carried, so the regions start where the query wrote each predicate, and the walks that look for a
    predicate that can raise, for parents to rise past and for columns to carry are skipped: a plan of cheap
    predicates (TPC-H's) is placed as before rising existed."""
    threshold = work.options.expensive_threshold
    return any(_expensive_movable(work.model, threshold, pred) for pred in work.preds)


def _expensive_movable(model: CostModel, threshold: float, pred: Pred) -> bool:
    """A WHERE or join-condition conjunct without a subquery whose per-row cost reaches ``threshold``
    (``options.expensive_threshold``): only such a predicate may pay for rising above where the query wrote it."""
    return pred.kind in ("where", "on") and not has_subquery(pred.form) and model.predicate_cost(pred.form) >= threshold


def _never(pred: Pred) -> bool:
    return False


def _reducer_above(node: Node, parent_of: dict[str, Node]) -> bool:
    """Whether an operator above ``node`` may drop rows (a join, an aggregate, a distinct, a filter, a set
    operation): rising pays only past one of those, so a predicate under none is not raised at all."""
    while (parent := parent_of.get(node.id)) is not None:
        if isinstance(parent, (Join, Aggregate, Distinct, Filter, SetOp)):
            return True
        node = parent
    return False


def _raised(start: Position, parent_of: dict[str, Node]) -> Position:
    """The highest position above ``start`` from which the rules bring the predicate back down to ``start``
    unchanged; ``start`` itself when it can rise past nothing."""
    node, form = start.node, start.form
    if start.kind == ON and not (isinstance(node, Join) and node.type in ("inner", "cross")):
        return start  # a conjunct of an outer, semi or anti join's condition is not a filter on its output
    moved = start.kind == ON
    while (parent := parent_of.get(node.id)) is not None:
        if any(can_raise(expr) for expr in node_expressions(parent)):
            break
        up = _form_above(form, parent)
        if up is None:
            break
        outcome = cross(up, parent)
        if isinstance(outcome, Blocked) or len(outcome) != 1:
            break
        (crossing,) = outcome
        if children(parent)[crossing.index] is not node or _unspelled(crossing.form) != _unspelled(form):
            break
        node, form, moved = parent, up, True
    return Position(node, ABOVE, form) if moved else start


def _form_above(form: Expr, parent: Node) -> Expr | None:
    """``form`` read on ``parent``'s output: its columns under the names ``parent`` gives them (a projection's or
    aggregate's own for a column it renames); None when a column the predicate reads does not come out."""
    used = column_ids(form)
    mapping: dict[int, Expr] = {}
    for out in output_fields(parent):
        if out.cid in used:
            mapping[out.cid] = Column(_shown(out.qualifier, out.name), out.cid, out.type)
    named = parent.exprs if isinstance(parent, Project) else parent.group_by if isinstance(parent, Aggregate) else ()
    for item in named:
        expr = item.expr
        if isinstance(expr, Column) and expr.cid in used and expr.cid not in mapping:
            mapping[expr.cid] = Column(_shown(item.qualifier, item.name), item.cid, expr.type)
    if not used <= mapping.keys():
        return None
    return substitute(form, mapping)


def _shown(qualifier: str | None, name: str) -> str:
    return f"{qualifier}.{name}" if qualifier else name


def _unspelled(form: Expr) -> Expr:
    """``form`` with every column's spelling dropped: the same predicate whatever scope names its columns."""
    return substitute(form, {cid: Column("", cid) for cid in column_ids(form)})


def _written(root: Position, start: Position) -> Position | None:
    """The position of ``root``'s region where the query wrote the predicate (for a join condition's conjunct,
    the join's output, which its region passes instead)."""
    for pos in iter_region(root):
        if pos.node.id == start.node.id and pos.kind == ABOVE:
            return pos
    return None
