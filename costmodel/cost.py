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
from dataclasses import dataclass, field
from typing import Any

from costmodel.catalog import Catalog
from costmodel.estimate import ColumnInfo, Estimator
from costmodel.expr import Call, Column, Expr, Subquery, and_, column_ids, conjuncts, per_row_cost, walk
from costmodel.options import Options
from costmodel.plan import (
    Aggregate,
    Alias,
    Distinct,
    Filter,
    Join,
    Limit,
    Node,
    Project,
    Scan,
    SetOp,
    Sort,
    Window,
    children,
    node_expressions,
    op_name,
    output_fields,
    walk_plan,
)

#: Rows beyond this are "more than anything runs"; it keeps every figure finite.
MAX_ESTIMATE = 1e30


@dataclass(frozen=True, slots=True)
class NodeCost:
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
    return round(x, 4) if abs(x) < 1000 else round(x, 1)


@dataclass(frozen=True, slots=True)
class _Est:
    cost: NodeCost
    ndv: Mapping[int, float]
    #: rows and NDVs this subtree would emit with no filter applied since the last aggregate, set
    #: operation or limit: joins are estimated on these and scaled by what the filters keep (see _join)
    base_rows: float = 0.0
    base_ndv: Mapping[int, float] = field(default_factory=dict)


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
                    stats = table.stats_for(f.name) if table is not None else None
                    rows = table.row_count if table is not None else None
                    out[f.cid] = ColumnInfo(stats, rows, node.table, f.name)
            for expr in node_expressions(node):
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
        self._join_keys: dict[str, tuple[object, tuple[list[tuple[Expr, Expr]], list[Expr]]]] = {}
        #: columns whose NDV nobody gave: assumed to be their table's row count (see _join)
        self._guessed: set[int] = set()
        self._joint_cache: dict[tuple[int, ...], tuple[tuple[Expr, ...], float | None]] = {}
        self._samples = any(getattr(source, "name", "") == "sample" for source in estimator.sources)
        self._memo: dict[int, tuple[Node, _Est]] = {}
        self._facts: dict[int, tuple[Expr, float, float, frozenset[int]]] = {}
        self.warnings: list[str] = []
        #: conjunct estimations done so far: placement stops costing past a budget
        self.work = 0

    # ---------------------------------------------------------------- public

    def _predicate_facts(self, predicate: Expr) -> tuple[Expr, float, float, frozenset[int]]:
        """(predicate, selectivity, per-row cost, columns), cached by object: placement asks often."""
        hit = self._facts.get(id(predicate))
        if hit is None or hit[0] is not predicate:
            hit = (
                predicate,
                self.estimator.estimate(predicate).selectivity,
                per_row_cost(predicate, self.options.predicate_costs),
                column_ids(predicate),
            )
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

    def node_cost(self, node: Node) -> NodeCost:
        return self._est(node).cost

    # ---------------------------------------------------------------- estimation

    def _est(self, node: Node) -> _Est:
        hit = self._memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        est = self._estimate(node)
        self._memo[id(node)] = (node, est)
        return est

    def _apply(self, rows: float, ndv: dict[int, float], predicates: list[Expr]) -> tuple[float, float]:
        """Rows after ``predicates``; updates ``ndv`` in place; returns (rows, per-row cost k).

        AND short-circuits: each conjunct is paid only on the rows the earlier
        ones kept, so one filter of several conjuncts costs what a stack of
        single-conjunct filters costs.
        """
        k = 0.0
        surviving = 1.0
        self.work += len(predicates)
        start = rows
        for pred in predicates:
            _, s, cost, cids = self._predicate_facts(pred)
            equal = _column_equality(pred)
            if equal is not None and equal[0] in ndv and equal[1] in ndv:
                # l.k = r.k costs the same whether a filter or a join key: 1 / max(NDV) at this point
                s = 1.0 / max(ndv[equal[0]], ndv[equal[1]], 1.0)
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
            if value > rows and cid not in self._guessed:
                ndv[cid] = rows
        return rows, k

    def _joint(self, predicates: list[Expr]) -> float | None:
        """The selectivity of a conjunction as a whole, when a sample estimated it so."""
        key = tuple(map(id, predicates))
        hit = self._joint_cache.get(key)
        if hit is None or any(a is not b for a, b in zip(hit[0], predicates, strict=True)):
            estimate = self.estimator.estimate(and_(predicates))
            value = estimate.selectivity if estimate.source == "sample" else None
            hit = (tuple(predicates), value)
            self._joint_cache[key] = hit
        return hit[1]

    def _make(
        self,
        node: Node,
        inputs: tuple[float, ...],
        rows_out: float,
        k: float,
        ndv: dict[int, float],
        extra: float = 0.0,
        base: tuple[float, Mapping[int, float]] | None = None,
    ) -> _Est:
        """The estimate; ``base`` (rows and NDVs without the filters below) defaults to the output itself."""
        rows_out = min(rows_out, MAX_ESTIMATE)  # cross joins of cross joins stay finite
        rows_in = sum(inputs)
        cost = k * rows_in + extra
        below = sum(self._est(child).cost.subtree_cost for child in children(node))
        base_rows, base_ndv = base if base is not None else (rows_out, ndv)
        return _Est(
            NodeCost(node.id, op_name(node), rows_in, rows_out, k, cost, below + cost, inputs),
            ndv,
            min(base_rows, MAX_ESTIMATE),
            base_ndv,
        )

    def _estimate(self, node: Node) -> _Est:
        opts = self.options
        if isinstance(node, Scan):
            table = self.catalog.table(node.table)
            rows = table.row_count if table is not None and table.row_count is not None else None
            if rows is None:
                rows = opts.default_row_count
                message = f"table {node.table!r} has no row_count; assumed {rows:g} rows"
                if message not in self.warnings:
                    self.warnings.append(message)
            ndv: dict[int, float] = {}
            tracked = self.tracked
            for f in node.fields:
                if tracked is not None and f.cid not in tracked:
                    continue
                stats = table.stats_for(f.name) if table is not None else None
                if stats is not None and stats.ndv:
                    ndv[f.cid] = min(float(stats.ndv), rows)
                else:
                    ndv[f.cid] = rows
                    self._guessed.add(f.cid)
            table_rows = rows
            k_read = opts.k("scan")
            if node.containers is not None and table is not None and table.containers:
                rows = self._kept_rows(table, node.containers, rows)
            if node.index is not None:
                fetched = table_rows
                for pred in node.index.predicates:
                    fetched *= self.selectivity(pred)
                rows = min(rows, fetched)
                k_read = opts.k("index_lookup")
            base_ndv = dict(ndv)
            out, k_filters = self._apply(
                table_rows, ndv, list(node.filters) + (list(node.index.predicates) if node.index is not None else [])
            )
            # the filters' own cost is paid on the rows actually read
            k_filters = k_filters - (
                sum(self.predicate_cost(p) for p in node.index.predicates) if node.index is not None else 0.0
            )
            out = min(out, rows)
            return self._make(node, (rows,), out, k_read + max(k_filters, 0.0), ndv, 0.0, (table_rows, base_ndv))

        kid_ests = [self._est(child) for child in children(node)]
        inputs = tuple(e.cost.rows_out for e in kid_ests)

        if isinstance(node, Filter):
            ndv = dict(kid_ests[0].ndv)
            out, k = self._apply(inputs[0], ndv, conjuncts(node.predicate))
            return self._make(node, inputs, out, k, ndv, 0.0, (kid_ests[0].base_rows, kid_ests[0].base_ndv))
        if isinstance(node, (Sort, Alias, Window, Project)):
            child = kid_ests[0]
            ndv = dict(child.ndv)
            base_ndv = child.base_ndv
            if isinstance(node, Project):
                base_ndv = dict(base_ndv)
                for named in node.exprs:
                    if named.cid not in ndv:
                        guess = self._expr_ndv(named.expr, child.ndv)
                        if guess is not None:
                            ndv[named.cid] = guess
                        base_guess = self._expr_ndv(named.expr, child.base_ndv)
                        if base_guess is not None:
                            base_ndv[named.cid] = base_guess
            out = inputs[0]
            base = (child.base_rows, base_ndv)
            if isinstance(node, Sort) and node.limit is not None:
                out = min(out, float(node.limit))
                base = None  # a top-N is a boundary: rows above it are its own
            return self._make(node, inputs, out, opts.k(op_name(node)), ndv, 0.0, base)
        if isinstance(node, Limit):
            out = max(0.0, inputs[0] - node.offset)
            if node.count is not None:
                out = min(out, float(node.count))
            return self._make(node, inputs, out, opts.k("limit"), dict(kid_ests[0].ndv))
        if isinstance(node, Aggregate):
            rows_in = inputs[0]

            def groups_of(keys: tuple) -> float:
                """Groups one grouping emits: the product of its keys' NDVs, at most the input rows."""
                if not keys:
                    return 1.0
                groups = 1.0
                for key in keys:
                    guess = self._expr_ndv(key.expr, kid_ests[0].ndv)
                    groups *= guess if guess is not None else rows_in
                    if groups >= rows_in:
                        break
                return min(rows_in, groups)

            if node.grouping_sets is None:
                out = groups_of(node.group_by)
            else:  # every grouping set emits its own groups (ROLLUP (a, b): groups of (a, b), of (a), and 1)
                out = sum(groups_of(tuple(node.group_by[i] for i in s)) for s in node.grouping_sets)
            ndv = {}
            for key in node.group_by:
                guess = self._expr_ndv(key.expr, kid_ests[0].ndv)
                if guess is not None:
                    ndv[key.cid] = min(guess, out)
            return self._make(node, inputs, out, opts.k("aggregate"), ndv)
        if isinstance(node, Distinct):
            rows_in = inputs[0]
            groups = 1.0
            for f in output_fields(node):
                value = kid_ests[0].ndv.get(f.cid)
                groups *= value if value is not None else rows_in
                if groups >= rows_in:
                    break
            out = min(rows_in, groups)
            return self._make(node, inputs, out, opts.k("distinct"), dict(kid_ests[0].ndv))
        if isinstance(node, SetOp):
            if node.op == "union":
                out = sum(inputs)
            elif node.op == "intersect":
                out = min(inputs)
            else:
                out = inputs[0]
            return self._make(node, inputs, out, opts.k("union"), {})
        if isinstance(node, Join):
            return self._join(node, kid_ests, inputs)
        raise TypeError(f"unknown node {node!r}")

    def _key_divisor(
        self,
        lk: Expr,
        rk: Expr,
        left_ndv: Mapping[int, float],
        right_ndv: Mapping[int, float],
        left_rows: float,
        right_rows: float,
    ) -> float:
        """max(NDV left key, NDV right key), the textbook join divisor, with a rule for unknown NDVs.

        A key whose NDV nobody gave carries its table's row count (it may be a primary key). When both
        are guessed, the smaller table is taken for the primary-key side: each row of the other side
        matches one of its rows, so filtering it shrinks the join in proportion. When one is known, it
        is used alone.
        """
        lcid = lk.cid if isinstance(lk, Column) else None
        rcid = rk.cid if isinstance(rk, Column) else None
        ln = left_ndv.get(lcid, left_rows) if lcid is not None else left_rows
        rn = right_ndv.get(rcid, right_rows) if rcid is not None else right_rows
        l_guess = lcid is None or lcid in self._guessed
        r_guess = rcid is None or rcid in self._guessed
        if l_guess and r_guess:
            return min(ln, rn)
        if l_guess:
            return rn
        if r_guess:
            return ln
        return max(ln, rn)

    def _kept_rows(self, table: Any, kept: tuple[str, ...], rows: float) -> float:
        """Rows of the containers left after pruning: their counts, or their share of the table."""
        chosen = [c for c in table.containers if c.id in set(kept)]
        if all(c.row_count is not None for c in table.containers):
            return float(sum(c.row_count for c in chosen))
        return rows * len(chosen) / len(table.containers)

    def _expr_ndv(self, expr: Expr, ndv: Mapping[int, float]) -> float | None:
        if isinstance(expr, Column):
            return ndv.get(expr.cid)
        cids = column_ids(expr)
        if len(cids) == 1:
            return ndv.get(next(iter(cids)))
        return None

    def _inner_rows(
        self,
        keys: list[tuple[Expr, Expr]],
        left_rows: float,
        right_rows: float,
        left_ndv: Mapping[int, float],
        right_ndv: Mapping[int, float],
    ) -> float:
        """Matching pairs on the equi-join keys: |L| |R| / max(NDV) per key (the textbook estimate)."""
        if not keys:
            return left_rows * right_rows
        divisor = 1.0
        for lk, rk in keys:
            key_divisor = self._key_divisor(lk, rk, left_ndv, right_ndv, left_rows, right_rows)
            divisor = max(divisor, key_divisor) if len(keys) == 1 else divisor * max(key_divisor, 1.0)
        return min(left_rows * right_rows / max(divisor, 1.0), left_rows * right_rows)

    def _join(self, node: Join, kid_ests: list[_Est], inputs: tuple[float, ...]) -> _Est:
        """A join's rows, estimated on its inputs as they would be without any filter below (their base),
        then scaled by the fraction of each input those filters keep.

        So a filter costs the plan the same rows whether it stands above the join or below it: the
        textbook formula on filtered inputs would not agree with a filter applied to the join's output,
        and placement compares exactly those two.
        """
        left, right = kid_ests
        left_rows, right_rows = inputs
        cached = self._join_keys.get(node.id)
        if cached is None or cached[0] is not node.on:
            left_cids = {f.cid for f in output_fields(node.left)}
            cached = (node.on, split_join_condition(node, left_cids))
            self._join_keys[node.id] = cached
        keys, residual = cached[1]
        base_inner = self._inner_rows(keys, left.base_rows, right.base_rows, left.base_ndv, right.base_ndv)
        left_kept = left_rows / left.base_rows if left.base_rows > 0 else 0.0
        right_kept = right_rows / right.base_rows if right.base_rows > 0 else 0.0
        inner = base_inner * left_kept * right_kept
        extra = 0.0
        for pred in residual:
            s = self.selectivity(pred)
            extra += self.predicate_cost(pred) * inner
            inner *= s
            base_inner *= s
        jtype = node.type
        if jtype in ("inner", "cross"):
            out, base_out = inner, base_inner
        elif jtype == "left":
            out, base_out = max(inner, left_rows), max(base_inner, left.base_rows)
        elif jtype == "right":
            out, base_out = max(inner, right_rows), max(base_inner, right.base_rows)
        elif jtype == "full":
            out = max(inner, left_rows, right_rows)
            base_out = max(base_inner, left.base_rows, right.base_rows)
        else:
            if keys:
                (lk, rk) = keys[0]
                ln = left.base_ndv.get(lk.cid) if isinstance(lk, Column) else None
                rn = right.base_ndv.get(rk.cid) if isinstance(rk, Column) else None
                known = isinstance(lk, Column) and isinstance(rk, Column) and not ({lk.cid, rk.cid} & self._guessed)
                match = min(1.0, rn / ln) if known and ln and rn else 0.5
            else:
                match = 0.5
            base_match = min(match, base_inner / left.base_rows) if left.base_rows else 0.0
            match = min(1.0, base_match * right_kept)  # fewer right rows: fewer left rows find a partner
            out = left_rows * match if jtype == "semi" else left_rows * (1 - match)
            base_out = left.base_rows * (base_match if jtype == "semi" else 1 - base_match)
        ndv = dict(left.ndv)
        base_ndv = dict(left.base_ndv)
        if jtype not in ("semi", "anti"):
            ndv.update(right.ndv)
            base_ndv.update(right.base_ndv)
        for cid, value in ndv.items():
            if value > out and cid not in self._guessed:
                ndv[cid] = out
        return self._make(node, inputs, out, self.options.k("join"), ndv, extra, (base_out, base_ndv))


def _column_equality(pred: Expr) -> tuple[int, int] | None:
    if isinstance(pred, Call) and pred.fn == "=" and len(pred.args) == 2:
        a, b = pred.args
        if isinstance(a, Column) and isinstance(b, Column) and a.cid != b.cid:
            return a.cid, b.cid
    return None


def split_join_condition(node: Join, left_cids: set[int]) -> tuple[list[tuple[Expr, Expr]], list[Expr]]:
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
    return round(1 - after / before, 6)
