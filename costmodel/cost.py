"""Rows and cost per node: cost(node) = k(node) x rows received.

The benefit-model seed's tables, computed for a whole plan: for each node the
rows it receives, the rows it emits, its constant k and its cost. A filter's
k is the summed per-row cost of its predicates (a plain comparison is 1), so
an expensive predicate makes its filter expensive wherever it stands.

Estimates are memoized per node *object*: plans are immutable and rewrites
share unchanged subtrees, so costing a candidate placement only re-estimates
the nodes on the path that changed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final, NamedTuple

from costmodel.carry import CHARGED, carried_path
from costmodel.catalog import Catalog
from costmodel.estimate import JOINT_SOURCES, ColumnInfo, Estimator
from costmodel.estimate_live import without
from costmodel.estimate_ranges import bound_groups
from costmodel.estimate_types import column_info
from costmodel.expr import (
    ARITHMETIC,
    BOOLEAN,
    COMPARISONS,
    LIKES,
    REGEXES,
    Call,
    Column,
    Expr,
    Subquery,
    and_,
    column_ids,
    conjuncts,
    has_subquery,
    walk,
)
from costmodel.kinds.registry import kind_of
from costmodel.options import Options
from costmodel.plan import Join, Node, Scan, children, node_expressions, op_name, walk_plan
from costmodel.rounding import rounded

#: Rows beyond this are "more than anything runs"; it keeps every figure finite.
MAX_ESTIMATE: Final = 1e30


class NodeCost(NamedTuple):
    """A node's cost row. A named tuple, not a frozen dataclass: every node estimate (placement's candidates, the
    what-if models) makes one, and a frozen dataclass sets each of its eight fields through ``object.__setattr__``,
    where a tuple is built in one step."""

    id: str
    operator: str
    rows_in: float
    rows_out: float
    k: float
    cost: float
    subtree_cost: float
    #: per-input rows (one per child; a scan's table rows)
    inputs: tuple[float, ...]

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "operator": self.operator,
            "rows_in": _round(self.rows_in),
            "rows_out": _round(self.rows_out),
            "k": _round(self.k),
            "cost": _round(self.cost),
        }


def _round(x: float) -> float:
    return rounded(x, 4) if abs(x) < 1000 else rounded(x, 1)


class RowEstimate(NamedTuple):
    """A subtree's row estimate: its cost row, the NDVs of its columns, and its rows before filters (a named tuple,
    as ``NodeCost``: one per node estimate)."""

    cost: NodeCost
    ndv: dict[int, float]
    #: rows and NDVs this subtree would emit with no filter applied since the last aggregate, set
    #: operation or limit: joins are estimated on these and scaled by what the filters keep (see _join)
    base_rows: float
    base_ndv: dict[int, float]


def column_infos(plan: Node, catalog: Catalog) -> dict[int, ColumnInfo]:
    """Statistics of every base column the plan scans, by cid (subqueries included)."""
    out: dict[int, ColumnInfo] = {}
    stack = [plan]
    while stack:
        root = stack.pop()
        for node in walk_plan(root):
            if isinstance(node, Scan):
                table = catalog.table(node.table)
                for f in node.fields:
                    out[f.cid] = column_info(table, node.table, f.name)
            for expr in node_expressions(node):
                if has_subquery(expr):  # most expressions hold none: not walked
                    stack.extend(e.plan for e in walk(expr) if isinstance(e, Subquery))
    return out


class CostModel:
    """Estimates rows and cost of plans under one catalog, options and estimator."""

    def __init__(self, catalog: Catalog, options: Options, estimator: Estimator, tracked: frozenset[int] | None = None):
        """``tracked``: the columns whose NDV matters (keys, predicate columns); None tracks all."""
        self.catalog = catalog
        self.options = options
        self.estimator = estimator
        self.tracked = tracked
        self.join_keys: dict[str, tuple[object, tuple[list[tuple[Expr, Expr]], list[Expr]]]] = {}
        #: columns whose NDV nobody gave: assumed to be their table's row count (see _join)
        self.guessed: set[int] = set()
        self._joint_cache: dict[tuple[int, ...], tuple[tuple[Expr, ...], float | None]] = {}
        self._samples = any(getattr(source, "name", "") in JOINT_SOURCES for source in estimator.sources)
        self._memo: dict[int, tuple[Node, RowEstimate]] = {}
        #: the node being estimated and its inputs' estimates (``_estimate``, read by ``make``)
        self._kids_of: Node | None = None
        self._kids: list[RowEstimate] = []
        self._facts: dict[int, tuple[Expr, float, float, frozenset[int]]] = {}
        self.warnings: list[str] = []
        #: conjunct estimations done so far: placement stops costing past a budget
        self.work = 0
        #: per node id, the columns whose NDV nothing above reads (``costmodel.estimate_live``; ``drop_unread``)
        self._drops: dict[str, frozenset[int]] = {}
        #: per operator id, the columns it carries up for a predicate raised above it (``costmodel.carry``)
        self.carried: dict[str, frozenset[int]] = {}
        #: nodes estimated before ``drop_unread``: estimated again without counting their work twice
        self._counted: dict[int, Node] = {}
        self._recount = False
        #: the model a what-if was made from (``what_if``): its predicates' costs and columns are read off it
        self._base: CostModel | None = None

    def what_if(self, estimator: Estimator) -> CostModel:
        """A model of the same catalog, options and tracked columns whose selectivities come from ``estimator``
        (a what-if): a predicate's per-row cost and columns, which no selectivity changes, are the ones this
        model found."""
        model = CostModel(self.catalog, self.options, estimator, self.tracked)
        model._base = self
        # a join's keys and residual depend on its condition and its left input's columns, not on a selectivity
        model.join_keys = self.join_keys
        return model

    def drop_unread(self, drops: dict[str, frozenset[int]]) -> None:
        """From now on, leave out of each node's estimate the NDVs nobody above it reads (``drops``, by node id):
        every figure stays the same, estimates of long join chains stop growing with the tables below.
        Estimates made so far are made again (without counting their work twice), so that they match."""
        self._drops = drops
        self._counted = {id(node): node for node, _ in self._memo.values()}
        self._memo = {}

    # ---------------------------------------------------------------- public

    def _predicate_facts(self, predicate: Expr) -> tuple[Expr, float, float, frozenset[int]]:
        """(predicate, selectivity, per-row cost, columns), cached by object: placement asks often."""
        hit = self._facts.get(id(predicate))
        if hit is None or hit[0] is not predicate:
            known = self._base._facts.get(id(predicate)) if self._base is not None else None
            if known is not None and known[0] is predicate:
                cost, cids = known[2], known[3]
            else:
                cost, cids = per_row_cost(predicate, self.options.predicate_costs), column_ids(predicate)
            hit = (predicate, self.estimator.estimate(predicate).selectivity, cost, cids)
            self._facts[id(predicate)] = hit
        return hit

    def selectivity(self, predicate: Expr) -> float:
        return self._predicate_facts(predicate)[1]

    def predicate_cost(self, predicate: Expr) -> float:
        return self._predicate_facts(predicate)[2]

    def total(self, plan: Node) -> float:
        return self._est(plan).cost.subtree_cost

    def table(self, plan: Node) -> list[NodeCost]:
        """The per-node cost table, in plan pre-order."""
        return [self._est(node).cost for node in walk_plan(plan)]

    def carry_cost(self, reader: Node, reads: Expr) -> float:
        """What carrying the columns ``reads`` reads up to ``reader`` costs: per carried column, its per-row cost
        (``carried_column``) on the rows each join or sort below ``reader`` passes on with it; 0 when ``reader``
        stands where nothing had to carry them."""
        if not self.carried:
            return 0.0
        every = frozenset().union(*self.carried.values())
        cids = column_ids(reads) & every
        if not cids:
            return 0.0
        per_row = self.options.k("carried_column")
        total = 0.0
        for cid in cids:
            for op, kid in carried_path(reader, cid, self.carried) or ():
                if isinstance(op, CHARGED):
                    total += per_row * self._est(kid).cost.rows_out
        return total

    def row_estimate(self, node: Node) -> RowEstimate:
        """``node``'s rows, NDVs and cost row (estimated once per node object)."""
        return self._est(node)

    def node_cost(self, node: Node) -> NodeCost:
        return self._est(node).cost

    # ---------------------------------------------------------------- estimation

    def _est(self, node: Node) -> RowEstimate:
        memo = self._memo  # it holds every node it has seen, so a live node's id is in it only for that node
        hit = memo.get(id(node))
        if hit is not None:
            return hit[1]
        # inputs first, with an explicit stack (a plan may be 10,000 levels deep); each is estimated once
        stack: list[Node] = [node]
        while stack:
            current = stack[-1]
            if id(current) in memo:
                stack.pop()
                continue
            waiting = len(stack)
            for kid in reversed(children(current)):
                if id(kid) not in memo:
                    stack.append(kid)
            if len(stack) > waiting:  # an input not estimated yet: it goes first
                continue
            stack.pop()
            memo[id(current)] = (current, self._estimate(current))
        return memo[id(node)][1]

    def apply(self, rows: float, ndv: dict[int, float], predicates: list[Expr]) -> tuple[float, float]:
        """Rows after ``predicates``; updates ``ndv`` in place; returns (rows, per-row cost k).

        AND short-circuits: each conjunct is paid only on the rows the earlier
        ones kept, so one filter of several conjuncts costs what a stack of
        single-conjunct filters costs.
        """
        k = 0.0
        surviving = 1.0
        self.work += 0 if self._recount else len(predicates)
        start = rows
        # bounds on one column (d >= x AND d < y) keep an interval: at the last of them, the product of their
        # fractions is replaced by the interval's (costmodel.estimate_ranges)
        closing = {group[-1]: group for group in bound_groups(predicates)} if len(predicates) > 1 else {}
        applied: dict[int, float] = {}
        for i, pred in enumerate(predicates):
            _, s, cost, cids = self._predicate_facts(pred)
            equal = _column_equality(pred)
            if equal is not None and equal[0] in ndv and equal[1] in ndv:
                # l.k = r.k costs the same whether a filter or a join key: 1 / max(NDV) at this point
                s = 1.0 / max(ndv[equal[0]], ndv[equal[1]], 1.0)
            applied[i] = s
            group = closing.get(i)
            if group is not None:
                alone = math.prod(applied[j] for j in group)
                together = self._interval([predicates[j] for j in group])
                s *= together / alone if alone > 0 else 1.0
            k += cost * surviving
            surviving *= s
            rows *= s
            for cid in cids:
                if cid in ndv:
                    ndv[cid] = max(1.0, ndv[cid] * s) if s > 0 else 0.0
        if len(predicates) > 1 and self._samples:
            joint = self._joint(predicates)
            if joint is not None:
                rows = start * joint  # correlated columns: the sample saw them together
        for cid, value in ndv.items():
            if value > rows and cid not in self.guessed:
                ndv[cid] = rows
        return rows, k

    def _interval(self, bounds: list[Expr]) -> float:
        """The selectivity of bounds on one column together (an interval when statistics place them); the
        estimator remembers an equal conjunction's estimate, so asking again costs a lookup."""
        return self.estimator.estimate(and_(bounds)).selectivity

    def _joint(self, predicates: list[Expr]) -> float | None:
        """The selectivity of a conjunction as a whole, when a sample estimated it so."""
        key = tuple([id(p) for p in predicates])
        hit = self._joint_cache.get(key)
        if hit is None or any(a is not b for a, b in zip(hit[0], predicates, strict=True)):
            estimate = self.estimator.estimate(and_(predicates))
            value = estimate.selectivity if estimate.source in JOINT_SOURCES else None
            hit = (tuple(predicates), value)
            self._joint_cache[key] = hit
        return hit[1]

    def make(
        self,
        node: Node,
        inputs: tuple[float, ...],
        rows_out: float,
        k: float,
        ndv: dict[int, float],
        extra: float = 0.0,
        base: tuple[float, dict[int, float]] | None = None,
    ) -> RowEstimate:
        """The estimate; ``base`` (rows and NDVs without the filters below) defaults to the output itself."""
        rows_out = min(rows_out, MAX_ESTIMATE)  # cross joins of cross joins stay finite
        rows_in = 0.0
        for rows in inputs:
            rows_in += rows
        cost = k * rows_in + extra
        kids = self._kids if self._kids_of is node else [self._est(child) for child in children(node)]
        below = 0.0
        for kid in kids:
            below += kid.cost.subtree_cost
        base_rows, base_ndv = base if base is not None else (rows_out, ndv)
        drop = self._drops.get(node.id)
        if drop is not None:
            ndv, base_ndv = without(ndv, drop), without(base_ndv, drop)
        return RowEstimate(
            NodeCost(node.id, op_name(node), rows_in, rows_out, k, cost, below + cost, inputs),
            ndv,
            min(base_rows, MAX_ESTIMATE),
            base_ndv,
        )

    def _estimate(self, node: Node) -> RowEstimate:
        """``node``'s estimate; its inputs' are known (``_est``). A union of 2,000 branches is estimated once
        per candidate placement, so its inputs are looked up once, for the kind's hook and ``make`` both."""
        memo = self._memo
        kid_ests: list[RowEstimate] = []
        rows: list[float] = []
        for kid in children(node):  # one loop for both (a comprehension is a call of its own)
            estimate = memo[id(kid)][1]
            kid_ests.append(estimate)
            rows.append(estimate.cost.rows_out)
        inputs = tuple(rows)
        self._kids_of, self._kids = node, kid_ests
        self._recount = self._counted.get(id(node)) is node
        try:
            return kind_of(node).estimate(self, node, kid_ests, inputs)
        finally:
            self._kids_of, self._kids, self._recount = None, [], False

    def kept_rows(self, table: Any, kept: tuple[str, ...], rows: float) -> float:
        """Rows of the containers left after pruning: their counts, or their share of the table."""
        chosen = [c for c in table.containers if c.id in set(kept)]
        if all(c.row_count is not None for c in table.containers):
            return float(sum(c.row_count for c in chosen))
        return rows * len(chosen) / len(table.containers)

    def expr_ndv(self, expr: Expr, ndv: dict[int, float]) -> float | None:
        if isinstance(expr, Column):
            return ndv.get(expr.cid)
        cids = column_ids(expr)
        if len(cids) == 1:
            return ndv.get(next(iter(cids)))
        return None


def _column_equality(pred: Expr) -> tuple[int, int] | None:
    if isinstance(pred, Call) and pred.fn == "=" and len(pred.args) == 2:
        a, b = pred.args
        if isinstance(a, Column) and isinstance(b, Column) and a.cid != b.cid:
            return a.cid, b.cid
    return None


def split_join_condition(node: Join, left_cids: AbstractSet[int]) -> tuple[list[tuple[Expr, Expr]], list[Expr]]:
    """Equi-join key pairs (left expr, right expr) and the residual conjuncts of ``node.on``."""
    keys: list[tuple[Expr, Expr]] = []
    residual: list[Expr] = []
    if node.on is None:
        return keys, residual
    for part in conjuncts(node.on):
        if isinstance(part, Call) and part.fn in ("=", "<=>") and len(part.args) == 2:
            a, b = part.args
            ca, cb = column_ids(a), column_ids(b)
            if ca and cb:
                if ca <= left_cids and not (cb & left_cids):
                    keys.append((a, b))
                    continue
                if cb <= left_cids and not (ca & left_cids):
                    keys.append((b, a))
                    continue
        residual.append(part)
    return keys, residual


def savings(before: float, after: float) -> float:
    if before <= 0 or math.isclose(before, after):
        return 0.0
    return rounded(1 - after / before, 6)


def per_row_cost(expr: Expr, costs: Mapping[str, float]) -> float:
    """Cost of evaluating ``expr`` once, relative to a plain comparison (= 1)."""
    total = 0.0
    for node in walk(expr):
        if isinstance(node, Subquery):
            total += costs["subquery"]
        elif isinstance(node, Call):
            fn = node.fn
            if fn == "udf" or node.opaque:
                total += node.cost if node.cost is not None else costs["udf"]
            elif node.cost is not None:  # a declared function
                total += node.cost
            elif fn in BOOLEAN:
                total += costs["boolean"]
            elif fn in COMPARISONS or fn in ("is_null", "is_not_null"):
                total += costs["comparison"]
            elif fn == "in":
                total += costs["comparison"] + costs["in_item"] * max(0, len(node.args) - 1)
            elif fn == "between":
                total += 2 * costs["comparison"]
            elif fn in ARITHMETIC or fn == "cast":
                total += costs["arithmetic"]
            elif fn in LIKES:
                total += costs["like"]
            elif fn in REGEXES:
                total += costs["regex"]
            elif fn == "case":
                total += costs["comparison"]
            else:
                total += costs["function"]
    return max(total, 1.0)
