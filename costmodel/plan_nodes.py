"""The plan's node classes (``costmodel.plan`` holds what works on them, and re-exports them).

Each says what its inputs are (``children``) and makes itself over new ones (``with_children``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from costmodel.expr import Expr
from costmodel.plan_parts import Field, IndexLookup, NamedExpr, SortKey


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

    def children(self) -> tuple[Node, ...]:
        return ()

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self

    def with_filters(self, filters: tuple[Expr, ...]) -> Scan:
        """The scan reading with ``filters`` instead (placement adds predicates to a scan's own)."""
        return Scan(self.id, self.table, self.alias, filters, self.fields, self.index, self.containers, self.columns)


@dataclass(frozen=True, slots=True)
class Filter:
    id: str
    predicate: Expr
    input: Node

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Filter(self.id, self.predicate, kids[0])


@dataclass(frozen=True, slots=True)
class Project:
    id: str
    exprs: tuple[NamedExpr, ...]
    input: Node

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Project(self.id, self.exprs, kids[0])


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

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return (
            self
            if kids[0] is self.input
            else Aggregate(self.id, self.group_by, self.aggregates, kids[0], self.grouping_sets)
        )


@dataclass(frozen=True, slots=True)
class Join:
    id: str
    type: str
    on: Expr | None
    left: Node
    right: Node
    null_aware: bool = False

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def with_children(self, kids: Sequence[Node]) -> Node:
        if kids[0] is self.left and kids[1] is self.right:
            return self
        return Join(self.id, self.type, self.on, kids[0], kids[1], self.null_aware)

    def with_condition(self, on: Expr | None, type: str) -> Join:
        """The join on ``on`` as a ``type`` join instead (placement adds predicates to a join's condition)."""
        return Join(self.id, type, on, self.left, self.right, self.null_aware)


@dataclass(frozen=True, slots=True)
class SetOp:
    """``union`` (all or distinct), ``intersect`` or ``except``; columns match by position."""

    id: str
    op: str
    all: bool
    inputs: tuple[Node, ...]
    fields: tuple[Field, ...] = ()

    def children(self) -> tuple[Node, ...]:
        return self.inputs

    def with_children(self, kids: Sequence[Node]) -> Node:
        if all(a is b for a, b in zip(kids, self.inputs, strict=True)):
            return self
        return SetOp(self.id, self.op, self.all, tuple(kids), self.fields)


@dataclass(frozen=True, slots=True)
class Sort:
    id: str
    keys: tuple[SortKey, ...]
    input: Node
    limit: int | None = None

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Sort(self.id, self.keys, kids[0], self.limit)


@dataclass(frozen=True, slots=True)
class Limit:
    id: str
    count: int | None
    offset: int
    input: Node

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Limit(self.id, self.count, self.offset, kids[0])


@dataclass(frozen=True, slots=True)
class Window:
    id: str
    partition_by: tuple[Expr, ...]
    order_by: tuple[SortKey, ...]
    functions: tuple[NamedExpr, ...]
    input: Node

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return (
            self
            if kids[0] is self.input
            else Window(self.id, self.partition_by, self.order_by, self.functions, kids[0])
        )


@dataclass(frozen=True, slots=True)
class Distinct:
    id: str
    input: Node

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Distinct(self.id, kids[0])


@dataclass(frozen=True, slots=True)
class Alias:
    """``FROM (...) AS name``: same columns (same cids) under a new qualifier."""

    id: str
    name: str
    input: Node
    fields: tuple[Field, ...] = ()
    column_names: tuple[str, ...] | None = None

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Alias(self.id, self.name, kids[0], self.fields, self.column_names)


@dataclass(frozen=True, slots=True)
class Generate:
    """Each input row joined to the rows ``generator`` makes of it (``costmodel.kinds.generate``)."""

    id: str
    generator: Expr
    outer: bool
    alias: str
    columns: tuple[Field, ...]
    input: Node

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return (
            self
            if kids[0] is self.input
            else Generate(self.id, self.generator, self.outer, self.alias, self.columns, kids[0])
        )


@dataclass(frozen=True, slots=True)
class Sample:
    """A sample of its input's rows (``costmodel.kinds.sample``)."""

    id: str
    fraction: float
    method: str
    seed: int | None
    input: Node

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Sample(self.id, self.fraction, self.method, self.seed, kids[0])


Node = Scan | Filter | Project | Aggregate | Join | SetOp | Sort | Limit | Window | Distinct | Alias | Generate | Sample
