"""Logical plans: immutable nodes (``costmodel.plan_nodes``, re-exported here), each with a stable ``id``.

Output columns are ``Field``s with a ``cid`` (column identity). A scan mints a
cid per column; a project, aggregate or window mints one per computed output;
a union mints one per position; everything else passes its input's fields
through. Predicates refer to cids, so moving one down a tree is a matter of
asking which child produces its cids and, where a node computes them,
substituting the computing expression.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar, Token
from dataclasses import replace
from typing import Any, Final, assert_never

from costmodel.expr import HASHES, Expr, PlanNode, use_plan_walker
from costmodel.fold import CONSTANT_TRUTHS
from costmodel.kinds.registry import SAME_AS_INPUT, kind_of
from costmodel.plan_nodes import Aggregate as Aggregate
from costmodel.plan_nodes import Alias as Alias
from costmodel.plan_nodes import Distinct as Distinct
from costmodel.plan_nodes import Filter as Filter
from costmodel.plan_nodes import Generate as Generate
from costmodel.plan_nodes import Join as Join
from costmodel.plan_nodes import Limit as Limit
from costmodel.plan_nodes import Node as Node
from costmodel.plan_nodes import Project as Project
from costmodel.plan_nodes import Sample as Sample
from costmodel.plan_nodes import Scan as Scan
from costmodel.plan_nodes import SetOp as SetOp
from costmodel.plan_nodes import Sort as Sort
from costmodel.plan_nodes import Window as Window
from costmodel.plan_parts import Field as Field
from costmodel.plan_parts import IndexLookup as IndexLookup
from costmodel.plan_parts import NamedExpr as NamedExpr
from costmodel.plan_parts import SortKey as SortKey
from costmodel.plan_parts import WindowFrame as WindowFrame


def op_name(node: Node) -> str:
    """The operator's name in cost tables (a set operation says which)."""
    label = kind_of(node).label
    return label if isinstance(label, str) else label(node)


def children(node: Node) -> tuple[Node, ...]:
    return node.children()


def with_children(node: Node, kids: Sequence[Node]) -> Node:
    """Copy of ``node`` over new children (same id); ``node`` itself when they are the same objects."""
    return node.with_children(kids)


def _named_map(items: tuple[NamedExpr, ...], fn: Callable[[Expr], Expr]) -> tuple[NamedExpr, ...]:
    """``items`` with ``fn`` applied to each expression; the same tuple when nothing changed."""
    out = tuple(replace(e, expr=fn(e.expr)) for e in items)
    return items if all(a.expr is b.expr for a, b in zip(out, items, strict=True)) else out


def map_expressions(node: Node, fn: Callable[[Expr], Expr]) -> Node:
    """``node`` with ``fn`` applied to every expression it holds (children untouched).

    Exhaustive over the node union: a new kind is a type error here until it says what it holds.
    """
    match node:
        case Scan():
            return replace(node, filters=tuple(fn(f) for f in node.filters)) if node.filters else node
        case Filter():
            return replace(node, predicate=fn(node.predicate))
        case Project():
            return replace(node, exprs=_named_map(node.exprs, fn))
        case Aggregate():
            return replace(node, group_by=_named_map(node.group_by, fn), aggregates=_named_map(node.aggregates, fn))
        case Join():
            return replace(node, on=fn(node.on)) if node.on is not None else node
        case Sort():
            return replace(node, keys=tuple(replace(k, expr=fn(k.expr)) for k in node.keys))
        case Window():
            return replace(
                node,
                partition_by=tuple(fn(p) for p in node.partition_by),
                order_by=tuple(replace(k, expr=fn(k.expr)) for k in node.order_by),
                functions=_named_map(node.functions, fn),
            )
        case Generate():
            return replace(node, generator=fn(node.generator))
        case SetOp() | Limit() | Distinct() | Alias() | Sample():
            return node  # no expressions of their own
        case _:
            assert_never(node)


def replace_node(root: Node, node_id: str, new: Node) -> Node:
    """``root`` with the node ``node_id`` replaced by ``new``: only the path above it is rebuilt (no recursion)."""
    path: list[Node] = []  # root down to the node, found depth first
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        path.append(node)
        if node.id == node_id:
            break
        stack.extend((kid, depth + 1) for kid in reversed(children(node)))
    else:
        return root
    built = new
    for parent, old in zip(reversed(path[:-1]), reversed(path[1:]), strict=True):
        built = with_children(parent, [built if kid is old else kid for kid in children(parent)])
    return built


def walk_plan(node: Node) -> Iterator[Node]:
    """Pre-order, iterative."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current)[::-1])


#: Output columns already computed in this optimization, by node object (``plan_memo``); None outside one.
_FIELDS: Final[ContextVar[dict[int, tuple[Node, tuple[Field, ...]]] | None]] = ContextVar("output_fields", default=None)


#: every memo ``plan_memo`` opens and closes
_MEMOS: Final[tuple[ContextVar[Any], ...]] = (_FIELDS, HASHES, CONSTANT_TRUTHS)


def plan_memo(kept: tuple[Any, ...] | None = None) -> PlanMemo:
    """Remember, until the block ends, every node's output columns and every expression's hash and constant
    truth (all immutable; ``optimize`` opens one, the wire reader and writer too).

    Without it a join chain recomputes the columns of everything below each join, once per question (TPC-H
    plan requests take a quarter longer), and a 10,000-level expression is hashed and folded in quadratic time
    (tests/costmodel/test_deep_inputs.py: minutes instead of seconds). Inside
    an open one, another opens nothing. ``kept``: the memos of an earlier block (``open_memos``), opened again,
    so what is rendered after an optimization reuses what it remembered.
    """
    return PlanMemo(kept)


def open_memos() -> tuple[Any, ...] | None:
    """The memos of the open ``plan_memo`` block (None outside one), for ``plan_memo(kept)``."""
    return None if _FIELDS.get() is None else tuple(memo.get() for memo in _MEMOS)


class PlanMemo:
    """``plan_memo``'s block."""

    def __init__(self, kept: tuple[Any, ...] | None = None) -> None:
        self._tokens: list[tuple[ContextVar[Any], Token[Any]]] = []
        self._kept = kept

    def __enter__(self) -> None:
        if _FIELDS.get() is None:
            kept = self._kept or tuple({} for _ in _MEMOS)
            self._tokens = [(memo, memo.set(value)) for memo, value in zip(_MEMOS, kept, strict=True)]

    def __exit__(self, *exc: object) -> None:
        for memo, token in self._tokens:
            memo.reset(token)
        self._tokens = []


def output_fields(node: Node) -> tuple[Field, ...]:
    """The columns ``node`` emits, in order.

    Computed bottom-up with an explicit stack (a plan may be 10,000 levels deep): a kind's hook asks for its
    inputs' columns, which are then already known. Inside ``plan_memo`` every answer is remembered.
    """
    memo = _FIELDS.get()
    if memo is None:
        memo = {}
        token = _FIELDS.set(memo)
        try:
            return _output_fields(node, memo)
        finally:
            _FIELDS.reset(token)
    return _output_fields(node, memo)


def output_cids(node: Node) -> frozenset[int]:
    """The cids of ``output_fields(node)``.

    >>> from costmodel.plan import Scan
    >>> sorted(output_cids(Scan("s", "t", fields=(Field(1, "a"), Field(2, "b")))))
    [1, 2]
    """
    return frozenset([f.cid for f in output_fields(node)])


def _output_fields(node: Node, memo: dict[int, tuple[Node, tuple[Field, ...]]]) -> tuple[Field, ...]:
    hit = memo.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        current, ready = stack.pop()
        hit = memo.get(id(current))
        if hit is not None and hit[0] is current:
            continue
        own = kind_of(current).output_fields
        kids = children(current)
        needed = kids[:1] if own == SAME_AS_INPUT else kids
        if not ready:
            stack.append((current, True))
            for kid in reversed(needed):
                stack.append((kid, False))
            continue
        if own == SAME_AS_INPUT:
            fields = memo[id(kids[0])][1]
        else:
            assert callable(own)
            fields = own(current)
        memo[id(current)] = (current, fields)
    return memo[id(node)][1]


def node_expressions(node: Node) -> list[Expr]:
    """Every expression a node holds (used to look inside subqueries)."""
    return kind_of(node).expressions(node)


def _plan_expressions(plan: PlanNode) -> Iterator[Expr]:
    """Every expression of every node under ``plan`` (subqueries' own subqueries are walked by ``expr.walk``)."""
    for node in walk_plan(plan):  # type: ignore[arg-type]
        yield from node_expressions(node)


use_plan_walker(_plan_expressions)
