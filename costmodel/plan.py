"""Logical plan nodes: immutable, each with a stable ``id``.

Output columns are ``Field``s with a ``cid`` (column identity). A scan mints a
cid per column; a project, aggregate or window mints one per computed output;
a union mints one per position; everything else passes its input's fields
through. Predicates refer to cids, so moving one down a tree is a matter of
asking which child produces its cids and, where a node computes them,
substituting the computing expression.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from costmodel.expr import COLUMN_IDS, HASHES, Column, Expr, PlanNode, use_plan_walker
from costmodel.fold import CONSTANT_TRUTHS
from costmodel.kinds.registry import SAME_AS_INPUT, kind_of
from costmodel.rebuild import replaced
from costmodel.render import TEXTS


@dataclass(frozen=True, slots=True)
class Field:
    cid: int
    name: str
    qualifier: str | None = None
    type: str = "unknown"

    def column(self) -> Column:
        spelled = f"{self.qualifier}.{self.name}" if self.qualifier else self.name
        return Column(spelled, self.cid, self.type)


@dataclass(frozen=True, slots=True)
class WindowFrame:
    """A window function's frame, ``ROWS BETWEEN 1 PRECEDING AND CURRENT ROW``.

    ``kind`` is ``rows`` or ``range``; a bound is ``unbounded preceding``,
    ``N preceding``, ``current row``, ``N following`` or ``unbounded following``.
    """

    kind: str = "rows"
    start: str = "unbounded preceding"
    end: str = "current row"

    def sql(self) -> str:
        return f"{self.kind.upper()} BETWEEN {self.start.upper()} AND {self.end.upper()}"


@dataclass(frozen=True, slots=True)
class NamedExpr:
    """``expr AS name``; ``cid`` is the output column it defines."""

    expr: Expr
    name: str
    cid: int = -1
    qualifier: str | None = None
    partition_by: tuple[Expr, ...] | None = None  # per-function window partition, when it differs
    frame: WindowFrame | None = None  # a window function's frame, when it has one


@dataclass(frozen=True, slots=True)
class SortKey:
    expr: Expr
    desc: bool = False
    nulls_first: bool | None = None


@dataclass(frozen=True, slots=True)
class IndexLookup:
    """Scan through an index (Dolt's "Indexed table access on index [...]")."""

    index: str
    columns: tuple[str, ...]
    predicates: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Scan:
    id: str
    table: str
    alias: str | None = None
    filters: tuple[Expr, ...] = ()
    fields: tuple[Field, ...] = ()
    index: IndexLookup | None = None
    #: the containers left to read after pruning (None: all of them)
    containers: tuple[str, ...] | None = None
    #: the column names the wire gave for a table the catalog does not know (written back as given)
    columns: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Filter:
    id: str
    predicate: Expr
    input: Node


@dataclass(frozen=True, slots=True)
class Project:
    id: str
    exprs: tuple[NamedExpr, ...]
    input: Node


@dataclass(frozen=True, slots=True)
class Aggregate:
    id: str
    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    input: Node
    #: GROUPING SETS / ROLLUP / CUBE: each set lists the indexes of the group_by keys it groups by
    #: (None: one grouping by every key). A key missing from a set is NULL in that set's rows.
    grouping_sets: tuple[tuple[int, ...], ...] | None = None

    def keys_in_every_set(self) -> set[int]:
        """Column ids of the keys every grouping set groups by (all keys without grouping sets)."""
        if self.grouping_sets is None:
            return {k.cid for k in self.group_by}
        common = set(range(len(self.group_by)))
        for grouping in self.grouping_sets:
            common &= set(grouping)
        return {self.group_by[i].cid for i in common}


@dataclass(frozen=True, slots=True)
class Join:
    id: str
    type: str
    on: Expr | None
    left: Node
    right: Node
    null_aware: bool = False


@dataclass(frozen=True, slots=True)
class SetOp:
    """``union`` (all or distinct), ``intersect`` or ``except``; columns match by position."""

    id: str
    op: str
    all: bool
    inputs: tuple[Node, ...]
    fields: tuple[Field, ...] = ()


@dataclass(frozen=True, slots=True)
class Sort:
    id: str
    keys: tuple[SortKey, ...]
    input: Node
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Limit:
    id: str
    count: int | None
    offset: int
    input: Node


@dataclass(frozen=True, slots=True)
class Window:
    id: str
    partition_by: tuple[Expr, ...]
    order_by: tuple[SortKey, ...]
    functions: tuple[NamedExpr, ...]
    input: Node


@dataclass(frozen=True, slots=True)
class Distinct:
    id: str
    input: Node


@dataclass(frozen=True, slots=True)
class Alias:
    """``FROM (...) AS name``: same columns (same cids) under a new qualifier."""

    id: str
    name: str
    input: Node
    fields: tuple[Field, ...] = ()
    column_names: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Generate:
    """Each input row joined to the rows ``generator`` makes of it (``costmodel.kinds.generate``)."""

    id: str
    generator: Expr
    outer: bool
    alias: str
    columns: tuple[Field, ...]
    input: Node


@dataclass(frozen=True, slots=True)
class Sample:
    """A sample of its input's rows (``costmodel.kinds.sample``)."""

    id: str
    fraction: float
    method: str
    seed: int | None
    input: Node


Node = Scan | Filter | Project | Aggregate | Join | SetOp | Sort | Limit | Window | Distinct | Alias | Generate | Sample


def op_name(node: Node) -> str:
    """The operator's name in cost tables (a set operation says which)."""
    return kind_of(node).label(node)


def children(node: Node) -> tuple[Node, ...]:
    return kind_of(node).children(node)


def with_children(node: Node, kids: Sequence[Node]) -> Node:
    """Copy of ``node`` over new children (same id); ``node`` itself when they are the same objects."""
    return kind_of(node).with_children(node, kids)


def _named_map(items: tuple[NamedExpr, ...], fn: Callable[[Expr], Expr]) -> tuple[NamedExpr, ...]:
    """``items`` with ``fn`` applied to each expression; the same tuple when nothing changed."""
    out = tuple(replaced(e, expr=fn(e.expr)) for e in items)
    return items if all(a.expr is b.expr for a, b in zip(out, items, strict=True)) else out


def map_expressions(node: Node, fn: Callable[[Expr], Expr]) -> Node:
    """``node`` with ``fn`` applied to every expression it holds (children untouched)."""
    if isinstance(node, Scan) and node.filters:
        return replaced(node, filters=tuple(fn(f) for f in node.filters))
    if isinstance(node, Filter):
        return replaced(node, predicate=fn(node.predicate))
    if isinstance(node, Project):
        return replaced(node, exprs=_named_map(node.exprs, fn))
    if isinstance(node, Aggregate):
        return replaced(node, group_by=_named_map(node.group_by, fn), aggregates=_named_map(node.aggregates, fn))
    if isinstance(node, Join) and node.on is not None:
        return replaced(node, on=fn(node.on))
    if isinstance(node, Sort):
        return replaced(node, keys=tuple(replaced(k, expr=fn(k.expr)) for k in node.keys))
    if isinstance(node, Window):
        return replaced(
            node,
            partition_by=tuple(fn(p) for p in node.partition_by),
            order_by=tuple(replaced(k, expr=fn(k.expr)) for k in node.order_by),
            functions=_named_map(node.functions, fn),
        )
    return node


def walk_plan(node: Node) -> Iterator[Node]:
    """Pre-order, iterative."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


#: Output columns already computed in this optimization, by node object (``plan_memo``); None outside one.
_FIELDS: ContextVar[dict[int, tuple[Node, tuple[Field, ...]]] | None] = ContextVar("output_fields", default=None)
#: The same columns' cids as a set, by node object (``plan_memo``): a join asks which side a column comes from.
_CIDS: ContextVar[dict[int, tuple[Node, frozenset[int]]] | None] = ContextVar("output_cids", default=None)
#: Other per-node memos of this optimization, by purpose (``scoped_memo``).
_SCOPED: ContextVar[dict[str, dict[int, Any]] | None] = ContextVar("scoped_memos", default=None)


#: every memo ``plan_memo`` opens and closes
_MEMOS: tuple[ContextVar[Any], ...] = (_FIELDS, HASHES, TEXTS, CONSTANT_TRUTHS, _CIDS, _SCOPED, COLUMN_IDS)


@contextmanager
def plan_memo() -> Iterator[None]:
    """Remember, until the block ends, every node's output columns, every expression's hash, constant truth,
    text and columns read (all immutable; ``optimize`` opens one, the wire reader and writer too).

    Without it a join chain recomputes the columns of everything below each join, once per question.
    """
    if _FIELDS.get() is not None:
        yield
        return
    tokens = [(memo, memo.set({})) for memo in _MEMOS]
    try:
        yield
    finally:
        for memo, token in tokens:
            memo.reset(token)


def scoped_memo(purpose: str) -> dict[int, Any] | None:
    """A memo by node object for ``purpose`` that lives as long as the open ``plan_memo`` (None outside one);
    entries hold the node too, so a reused ``id`` is told apart."""
    memos = _SCOPED.get()
    return None if memos is None else memos.setdefault(purpose, {})


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
    """The cids of ``output_fields(node)``, remembered inside ``plan_memo``: asked at every join of a chain,
    a set built anew each time would make the chain quadratic.

    >>> from costmodel.plan import Scan
    >>> sorted(output_cids(Scan("s", "t", fields=(Field(1, "a"), Field(2, "b")))))
    [1, 2]
    """
    memo = _CIDS.get()
    if memo is None:
        return frozenset(map(_cid, output_fields(node)))
    from costmodel.shared_walk import shared_bottom_up  # it walks plans with this module's helpers

    return shared_bottom_up(node, memo, lambda fields: frozenset(map(_cid, fields)), _united_cids)


def _united_cids(join: Join, left: frozenset[int], right: frozenset[int]) -> frozenset[int] | None:
    """A join that outputs exactly its inputs' columns has their cids; any other join its own."""
    return left | right if len(output_fields(join)) == len(left) + len(right) else None


_cid = attrgetter("cid")


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
        kind = kind_of(current)
        kids = children(current)
        needed = kids[:1] if kind.output_fields == SAME_AS_INPUT else kids
        if not ready:
            stack.append((current, True))
            stack.extend((kid, False) for kid in reversed(needed))
            continue
        if kind.output_fields == SAME_AS_INPUT:
            fields = memo[id(kids[0])][1]
        else:
            assert callable(kind.output_fields)
            fields = kind.output_fields(current)
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
