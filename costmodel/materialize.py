"""Plans built from a skeleton and the predicates' placements, sharing unchanged subtrees.

Costing a candidate placement rebuilds only the nodes between the positions that changed and the point where
the estimates stop changing (``Materializer.moved``), so a candidate in a large plan costs a handful of nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from heapq import heappop, heappush
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from costmodel.expr import Expr, and_, conjuncts
from costmodel.plan import Filter, Join, Node, Scan, children, with_children
from costmodel.positions import ABOVE, ON, SCAN, Position, Pred, deepest

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate


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
            kids = tuple([tops[kid.id] for kid in children(node)])
            tops[node_id] = self._assemble(
                node,
                kids,
                placements.get((node_id, SCAN), ()),
                placements.get((node_id, ON), ()),
                placements.get((node_id, ABOVE), ()),
                None,
            )
        return Built(tops[self.skeleton.id], tops, placements)

    def moved(self, base: Built, index: int, old: list[Position], new: list[Position], model: CostModel) -> Built:
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
            inputs = children(node)
            if len(inputs) > 8:  # a union of thousands of inputs: looked up in C
                kids = tuple(map((base.tops | rebuilt).__getitem__, [kid.id for kid in inputs]))
            else:
                found: list[Node] = []
                for kid in inputs:  # a loop, not a generator: most nodes have one or two inputs
                    found.append(rebuilt[kid.id] if kid.id in rebuilt else base.tops[kid.id])
                kids = tuple(found)
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
            delta += _own_cost(top, node_id, model) - _own_cost(before, node_id, model)
            if not queue and _same_estimate(model.row_estimate(top), model.row_estimate(before)):
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
                for child in reversed(children(current)):
                    stack.append((child, False))
                continue
            kids = tuple([tops[child.id] for child in children(current)])
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
        key = (
            node.id,
            tuple(map(id, kids)),
            _adds_key(scan_adds) if scan_adds else (),
            _adds_key(on_adds) if on_adds else (),
            _adds_key(above) if above else (),
            filter_id,
        )
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        new = with_children(node, kids)
        if scan_adds:
            assert isinstance(new, Scan)
            new = new.with_filters(new.filters + tuple([form for _, form in sorted(scan_adds, key=_first)]))
        if on_adds:
            assert isinstance(new, Join)
            parts = ([] if new.on is None else conjuncts(new.on)) + [form for _, form in sorted(on_adds, key=_first)]
            new = new.with_condition(and_(parts), "inner" if new.type == "cross" else new.type)
        if above:
            forms = [form for _, form in sorted(above, key=_first)]
            new = Filter(filter_id or f"~{node.id}", and_(forms), new)
        self._memo[key] = new
        return new


def _own_cost(top: Node, node_id: str, model: CostModel) -> float:
    """The own costs of the objects standing for skeleton node ``node_id``: its filter above, if any, and it."""
    total = 0.0
    current = top
    while True:
        total += model.row_estimate(current).cost.cost
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


def _adds_key(adds: Sequence[tuple[int, Expr]]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Which predicates, and which objects of their forms: what a memoized node holds besides its inputs."""
    indexes: list[int] = []
    forms: list[int] = []
    for index, form in adds:
        indexes.append(index)
        forms.append(id(form))
    return tuple(indexes), tuple(forms)


def placements_of(preds: list[Pred], skip: Pred | None = None) -> Placements:
    out: Placements = {}
    for pred in preds:
        if pred is skip:
            continue
        for pos in pred.cut:
            out.setdefault(pos.key, []).append((pred.index, pos.form))
    return out


def deepest_placements(preds: list[Pred]) -> Placements:
    """Every predicate, derived ones too, at the leaves of its region: where rule-based pushdown puts it (mode
    ``always``), whatever cuts placement chose."""
    out: Placements = {}
    for pred in preds:
        for pos in deepest(pred.root):
            out.setdefault(pos.key, []).append((pred.index, pos.form))
    return out
