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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from heapq import heappop, heappush
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

from costmodel.cut_change import cut_change
from costmodel.expr import Expr, and_, conjuncts
from costmodel.legality import cross
from costmodel.plan import Filter, Join, Node, Scan, children, with_children
from costmodel.reasons import Reason
from costmodel.rules import Blocked
from costmodel.rules.join import is_cross_side_equality, push_join_condition
from costmodel.rules.scan import push_into_scan
from costmodel.trampoline import Step, run

if TYPE_CHECKING:
    from costmodel.cost import RowEstimate

ABOVE, ON, SCAN = "above", "on", "scan"


@dataclass(eq=False)
class Position:
    """The predicate as ``form`` on ``node``'s output (ABOVE), in its join condition (ON), or in its filters (SCAN)."""

    node: Node
    kind: str
    form: Expr
    below: list[Position] = field(default_factory=list)
    stop: Blocked | None = None
    cost_here: float | None = None
    best_below: float | None = None
    #: an ON position a WHERE predicate reached from above: the end of its way down
    form_from_where: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.node.id, self.kind)

    def entered_child(self) -> int | None:
        """Which input of ``node`` the first position below enters (by id), or None."""
        if not self.below:
            return None
        target = self.below[0].node.id
        return next((i for i, kid in enumerate(children(self.node)) if kid.id == target), None)


@dataclass(eq=False)
class Pred:
    """One predicate to place: a WHERE conjunct, a join-condition conjunct, or a derived one."""

    index: int
    form: Expr
    kind: str  # "where" | "on" | "derived"
    root: Position
    origin_filter: str | None = None
    derived_reason: str | None = None
    via: str | None = None  # the join a derived predicate was inferred at
    cut: list[Position] = field(default_factory=list)
    #: nodes this predicate may not go below: where its guards stood (only for predicates that can raise)
    stop_at: frozenset[str] = frozenset()
    #: a derived predicate placed by cost: the plan's cost with it at its best cut, logged beside the cost
    #: without it so that the decision (added only when strictly cheaper) recomputes from the log
    cost_with: float | None = None


def build_region(pos: Position, scan_pushdown: bool, stop_at: frozenset[str] = frozenset()) -> Position:
    """Fill in ``pos.below``/``pos.stop`` with every legal position under ``pos`` (explicit stack, no recursion)."""
    stack = [pos]
    while stack:
        stack.extend(_fill(stack.pop(), scan_pushdown, stop_at))
    return pos


def _fill(pos: Position, scan_pushdown: bool, stop_at: frozenset[str]) -> list[Position]:
    """Set ``pos.below`` (or ``pos.stop``); returns the new positions below, still to be filled."""
    if pos.kind == SCAN or (pos.kind == ON and pos.form_from_where):
        return []
    node = pos.node
    if pos.kind == ABOVE and node.id in stop_at:
        pos.stop = Blocked(Reason.CAN_RAISE_GUARD, "the predicate can raise and a predicate below may guard it")
        return []
    if pos.kind == ON:
        assert isinstance(node, Join)
        outcome = push_join_condition(pos.form, node)
    elif isinstance(node, Scan):
        if not scan_pushdown:
            return []
        outcome = push_into_scan(pos.form, node)
        if isinstance(outcome, Blocked):
            pos.stop = outcome
        else:
            pos.below = [Position(node, SCAN, outcome[0].form)]
        return []
    else:
        outcome = cross(pos.form, node)
    if (
        isinstance(outcome, Blocked)
        and outcome.reason == "references_both_sides"
        and isinstance(node, Join)
        and node.type in ("inner", "cross")
        and is_cross_side_equality(pos.form, node)
    ):
        # Filter(l.k = r.k) over an inner join is the join keyed on it too (a cross join becomes inner);
        # other two-sided predicates stay above, where they cost the same (the Polars seed's a + b > 12)
        pos.below = [Position(node, ON, pos.form, form_from_where=True)]
        return []
    if isinstance(outcome, Blocked):
        pos.stop = outcome
        return []
    kids = children(node)
    pos.below = [Position(kids[c.index], ABOVE, c.form) for c in outcome]
    return pos.below


def iter_region(pos: Position) -> Iterator[Position]:
    stack = [pos]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.below)


def deepest(pos: Position) -> list[Position]:
    """The leaves of ``pos``'s region, left to right."""
    out: list[Position] = []
    stack = [pos]
    while stack:
        current = stack.pop()
        if current.below:
            stack.extend(reversed(current.below))
        else:
            out.append(current)
    return out


Placements = dict[tuple[str, str], list[tuple[int, Expr]]]


@dataclass
class Built:
    """A plan built from placements, with the object standing for each skeleton node (its filter, if any).

    A plan costed incrementally (``Materializer.moved``) keeps the old objects above the point where the
    estimates stop changing: their rows and NDVs are right, their subtrees are not, so such a plan is read
    through ``tops`` and ``total`` only; ``root`` is whole only for ``build`` and ``move``.
    """

    root: Node
    tops: dict[str, Node]
    placements: Placements
    #: the plan's total cost, when known
    total: float | None = None


class Materializer:
    """Builds plans from the skeleton and placements, reusing unchanged subtrees.

    ``build`` makes a whole plan; ``extend`` adds a few positions to a built
    plan by rebuilding only the paths from those positions to the root, so
    costing a candidate touches a handful of nodes.
    """

    def __init__(self, skeleton: Node):
        self.skeleton = skeleton
        self._memo: dict[tuple[Any, ...], Node] = {}
        self._parent: dict[str, str | None] = {skeleton.id: None}
        self._depth: dict[str, int] = {skeleton.id: 0}
        self._by_id: dict[str, Node] = {}
        stack = [skeleton]
        while stack:
            node = stack.pop()
            self._by_id[node.id] = node
            for child in children(node):
                self._parent[child.id] = node.id
                self._depth[child.id] = self._depth[node.id] + 1
                stack.append(child)

    def build(self, placements: Placements, filter_ids: dict[str, str] | None = None) -> Built:
        tops: dict[str, Node] = {}
        root = self._build(self.skeleton, placements, filter_ids or {}, tops)
        return Built(root, tops, placements)

    def move(self, base: Built, index: int, old: list[Position], new: list[Position]) -> Built:
        """``base`` with predicate ``index`` moved from the positions of ``old`` to those of ``new``.

        Only the paths from the changed positions to the root are rebuilt.
        """
        if old == new:  # the same positions (compared by identity): the same plan
            return base
        placements = dict(base.placements)
        touched: set[str] = set()
        for pos in old:
            placements[pos.key] = [item for item in placements.get(pos.key, []) if item[0] != index]
        for pos in new:
            placements[pos.key] = placements.get(pos.key, []) + [(index, pos.form)]
        for pos in old + new:
            node_id: str | None = pos.node.id
            while node_id is not None and node_id not in touched:
                touched.add(node_id)
                node_id = self._parent[node_id]
        tops = dict(base.tops)
        for node_id in sorted(touched, key=self._depth.__getitem__, reverse=True):
            node = self._by_id[node_id]
            kids = tuple(map(tops.__getitem__, map(_node_id, children(node))))
            tops[node_id] = self._assemble(
                node,
                kids,
                placements.get((node_id, SCAN), ()),
                placements.get((node_id, ON), ()),
                placements.get((node_id, ABOVE), ()),
                None,
            )
        return Built(tops[self.skeleton.id], tops, placements)

    def moved(self, base: Built, index: int, old: list[Position], new: list[Position], estimate: Estimate) -> Built:
        """``move``, costed incrementally: ``base.total`` plus the change in the own costs of the rebuilt nodes.

        Nodes are rebuilt deepest first, and only until the one node all changes sit under estimates the same
        rows and NDVs as before: nothing above it changes but subtree sums, so a predicate moved inside a
        10,000-node plan costs the nodes around it, not the path to the root.
        """
        if old == new:
            return base
        assert base.total is not None, "the base plan is costed"
        placements = self._placed(base.placements, index, old, new)
        queue: list[tuple[int, str]] = []
        queued: set[str] = set()
        for pos in old + new:
            if pos.node.id not in queued:
                queued.add(pos.node.id)
                heappush(queue, (-self._depth[pos.node.id], pos.node.id))
        rebuilt: dict[str, Node] = {}
        delta = 0.0
        while queue:
            _, node_id = heappop(queue)
            node = self._by_id[node_id]
            ids = tuple(map(_node_id, children(node)))
            if len(ids) > 8:  # a union of thousands of inputs: looked up in C
                kids = tuple(map((base.tops | rebuilt).__getitem__, ids))
            else:
                kids = tuple(rebuilt[i] if i in rebuilt else base.tops[i] for i in ids)
            top = self._assemble(
                node,
                kids,
                placements.get((node_id, SCAN), ()),
                placements.get((node_id, ON), ()),
                placements.get((node_id, ABOVE), ()),
                None,
            )
            rebuilt[node_id] = top
            before = base.tops[node_id]
            delta += _own_cost(top, node_id, estimate) - _own_cost(before, node_id, estimate)
            if not queue and _same_estimate(estimate(top), estimate(before)):
                break
            parent = self._parent[node_id]
            if parent is not None and parent not in queued:
                queued.add(parent)
                heappush(queue, (-self._depth[parent], parent))
        tops = base.tops | rebuilt
        return Built(tops[self.skeleton.id], tops, placements, base.total + delta)

    def _placed(self, placements: Placements, index: int, old: list[Position], new: list[Position]) -> Placements:
        """``placements`` with predicate ``index`` taken from the positions of ``old`` and put at ``new``."""
        placements = dict(placements)
        for pos in old:
            placements[pos.key] = [item for item in placements.get(pos.key, []) if item[0] != index]
        for pos in new:
            placements[pos.key] = placements.get(pos.key, []) + [(index, pos.form)]
        return placements

    def _build(self, node: Node, placements: Placements, filter_ids: dict[str, str], tops: dict[str, Node]) -> Node:
        """Children before parents, with an explicit stack (a skeleton may be 10,000 levels deep)."""
        stack: list[tuple[Node, bool]] = [(node, False)]
        while stack:
            current, ready = stack.pop()
            if not ready:
                stack.append((current, True))
                stack.extend((child, False) for child in reversed(children(current)))
                continue
            kids = tuple(tops[child.id] for child in children(current))
            tops[current.id] = self._assemble(
                current,
                kids,
                placements.get((current.id, SCAN), ()),
                placements.get((current.id, ON), ()),
                placements.get((current.id, ABOVE), ()),
                filter_ids.get(current.id),
            )
        return tops[node.id]

    def _assemble(
        self,
        node: Node,
        kids: tuple[Node, ...],
        scan_adds: Sequence[tuple[int, Expr]],
        on_adds: Sequence[tuple[int, Expr]],
        above: Sequence[tuple[int, Expr]],
        filter_id: str | None,
    ) -> Node:
        key = (  # built with C-level maps: a filter may hold thousands of conjuncts
            node.id,
            tuple(map(id, kids)),
            tuple(map(_first, scan_adds)),
            tuple(map(id, map(_second, scan_adds))),
            tuple(map(_first, on_adds)),
            tuple(map(id, map(_second, on_adds))),
            tuple(map(_first, above)),
            tuple(map(id, map(_second, above))),
            filter_id,
        )
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        new = with_children(node, kids)
        if scan_adds:
            assert isinstance(new, Scan)
            new = replace(new, filters=new.filters + tuple(map(_second, sorted(scan_adds, key=_first))))
        if on_adds:
            assert isinstance(new, Join)
            parts = ([] if new.on is None else conjuncts(new.on)) + list(map(_second, sorted(on_adds, key=_first)))
            new = replace(new, on=and_(parts), type="inner" if new.type == "cross" else new.type)
        if above:
            forms = list(map(_second, sorted(above, key=_first)))
            new = Filter(filter_id or f"~{node.id}", and_(forms), new)
        self._memo[key] = new
        return new


_node_id = attrgetter("id")


#: A node's row estimate (``CostModel.row_estimate``).
Estimate = Callable[[Node], "RowEstimate"]


def _own_cost(top: Node, node_id: str, estimate: Estimate) -> float:
    """The own costs of the objects standing for skeleton node ``node_id``: its filter above, if any, and it."""
    total = 0.0
    current = top
    while True:
        total += estimate(current).cost.cost
        if current.id == node_id or not isinstance(current, Filter):
            return total
        current = current.input


def _same_estimate(a: RowEstimate, b: RowEstimate) -> bool:
    """Whether a parent would estimate the same over ``a`` as over ``b`` (rows, NDVs, rows before filters)."""
    return (
        a.cost.rows_out == b.cost.rows_out
        and a.base_rows == b.base_rows
        and a.ndv == b.ndv
        and a.base_ndv == b.base_ndv
    )


_first = itemgetter(0)
_second = itemgetter(1)


def placements_of(preds: list[Pred], skip: Pred | None = None) -> Placements:
    out: Placements = {}
    for pred in preds:
        if pred is skip:
            continue
        for pos in pred.cut:
            out.setdefault(pos.key, []).append((pred.index, pos.form))
    return out


_EPS = 1e-9


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

    def best_from(pos: Position, fixed: list[Position]) -> Step[tuple[list[Position], float]]:
        """Trampolined (``costmodel.trampoline``): a region may be 10,000 positions deep."""
        if free_pass is not None and len(pos.below) == 1 and free_pass(pos):
            sub, sub_cost = yield best_from(pos.below[0], fixed)
            pos.best_below = sub_cost
            return sub, sub_cost
        here = cost(fixed + [pos])
        pos.cost_here = here
        best, best_cost = [pos], here
        if len(pos.below) == 1:
            sub, sub_cost = yield best_from(pos.below[0], fixed)
            pos.best_below = sub_cost
            if _better_or_equal(sub_cost, best_cost):
                best, best_cost = sub, sub_cost
        elif len(pos.below) > 1:
            chosen: list[Position] = []
            for i, branch in enumerate(pos.below):
                sub, _ = yield best_from(branch, fixed + chosen + pos.below[i + 1 :])
                chosen.extend(sub)
            together = cost(fixed + chosen)
            pos.best_below = together
            if _better_or_equal(together, best_cost):
                best, best_cost = chosen, together
        return best, best_cost

    return run(best_from(pred.root, []))


def place(
    preds: list[Pred],
    mode: str,
    materializer: Materializer,
    total: Callable[[Node], float],
    estimate: Estimate,
    over_budget: Callable[[], bool] = lambda: False,
    free_pass: FreePass | None = None,
) -> tuple[dict[int, float], int | None]:
    """Decide every predicate's cut in place: ``total`` costs the plan once, ``estimate`` each node, after
    which every candidate is costed incrementally (``Materializer.moved``).

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
                built = materializer.moved(start, pred.index, where, cut, estimate)
            else:
                before, base = latest[0]
                gone, came = cut_change(before, cut)  # a fork's cuts share all but a branch or two
                if len(gone) + len(came) <= len(where) + len(cut):
                    built = materializer.moved(base, pred.index, gone, came, estimate)
                else:
                    built = materializer.moved(start, pred.index, where, cut, estimate)
            latest[:] = [(cut, built)]
            return _total(built)

        passes = None if free_pass is None else (lambda pos: free_pass(pos, start))
        cut, cut_cost = best_cut(pred, cost, passes)
        return cut, cut_cost, cost

    current = None
    if mode == "cost":
        current = materializer.build(placements_of(preds))
        current.total = total(current.root)
    for pred in preds:
        if mode == "cost" and fallback_from is None and over_budget():
            fallback_from = pred.index
        if mode == "always" or fallback_from is not None:
            pred.cut = deepest(pred.root) if pred.kind != "derived" or mode == "always" else []
            continue
        assert current is not None
        cut, cut_cost, cost = best_at(pred, current)
        if pred.kind == "derived":
            absent = cost([])
            absent_costs[pred.index] = absent
            pred.cost_with = cut_cost
            # a derived predicate is only worth adding when it strictly lowers the cost
            if not cut_cost < absent - _EPS * max(1.0, absent):
                cut = []
        current = materializer.moved(current, pred.index, pred.cut, cut, estimate)
        pred.cut = cut
    if mode == "cost" and fallback_from is None:
        # a second look for predicates that stopped above a legal position: decided before the predicates
        # placed after them, they may find going lower pays now
        assert current is not None
        for pred in preds:
            if pred.kind == "derived" or not any(pos.below and pos.stop is None for pos in pred.cut) or over_budget():
                continue
            cut, _, _ = best_at(pred, current)
            current = materializer.moved(current, pred.index, pred.cut, cut, estimate)
            pred.cut = cut
    return absent_costs, fallback_from


def _total(built: Built) -> float:
    assert built.total is not None, "costed by Materializer.moved"
    return built.total
