"""The plan's node classes (``costmodel.plan`` holds what works on them, and re-exports them).

Each class writes its ``__init__`` out: compiled, that is a native constructor (docs/decisions/0003-compiled-engine.md).
Each says what its inputs are (``children``) and makes itself over new ones (``with_children``): compiled, a
native method call, where looking the kind up and calling its hook cost a plan request 8% (a rebuilt node was
copied field by field through ``replaced``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from costmodel.expr import Expr
from costmodel.plan_parts import Field, IndexLookup, NamedExpr, SortKey


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
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

    def __init__(
        self,
        id: str,
        table: str,
        alias: str | None = None,
        filters: tuple[Expr, ...] = (),
        fields: tuple[Field, ...] = (),
        index: IndexLookup | None = None,
        containers: tuple[str, ...] | None = None,
        columns: tuple[str, ...] | None = None,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "alias", alias)
        object.__setattr__(self, "filters", filters)
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "containers", containers)
        object.__setattr__(self, "columns", columns)

    def children(self) -> tuple[Node, ...]:
        return ()

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self

    def with_filters(self, filters: tuple[Expr, ...]) -> Scan:
        """The scan reading with ``filters`` instead (placement adds predicates to a scan's own)."""
        return Scan(self.id, self.table, self.alias, filters, self.fields, self.index, self.containers, self.columns)


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Filter:
    id: str
    predicate: Expr
    input: Node

    def __init__(self, id: str, predicate: Expr, input: Node) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "predicate", predicate)
        object.__setattr__(self, "input", input)

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Filter(self.id, self.predicate, kids[0])


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Project:
    id: str
    exprs: tuple[NamedExpr, ...]
    input: Node

    def __init__(self, id: str, exprs: tuple[NamedExpr, ...], input: Node) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "exprs", exprs)
        object.__setattr__(self, "input", input)

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Project(self.id, self.exprs, kids[0])


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Aggregate:
    id: str
    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    input: Node
    #: GROUPING SETS / ROLLUP / CUBE: each set lists the indexes of the group_by keys it groups by
    #: (None: one grouping by every key). A key missing from a set is NULL in that set's rows.
    grouping_sets: tuple[tuple[int, ...], ...] | None = None

    def __init__(
        self,
        id: str,
        group_by: tuple[NamedExpr, ...],
        aggregates: tuple[NamedExpr, ...],
        input: Node,
        grouping_sets: tuple[tuple[int, ...], ...] | None = None,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "group_by", group_by)
        object.__setattr__(self, "aggregates", aggregates)
        object.__setattr__(self, "input", input)
        object.__setattr__(self, "grouping_sets", grouping_sets)

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


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Join:
    id: str
    type: str
    on: Expr | None
    left: Node
    right: Node
    null_aware: bool = False

    def __init__(self, id: str, type: str, on: Expr | None, left: Node, right: Node, null_aware: bool = False) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "on", on)
        object.__setattr__(self, "left", left)
        object.__setattr__(self, "right", right)
        object.__setattr__(self, "null_aware", null_aware)

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def with_children(self, kids: Sequence[Node]) -> Node:
        if kids[0] is self.left and kids[1] is self.right:
            return self
        return Join(self.id, self.type, self.on, kids[0], kids[1], self.null_aware)

    def with_condition(self, on: Expr | None, type: str) -> Join:
        """The join on ``on`` as a ``type`` join instead (placement adds predicates to a join's condition)."""
        return Join(self.id, type, on, self.left, self.right, self.null_aware)


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class SetOp:
    """``union`` (all or distinct), ``intersect`` or ``except``; columns match by position."""

    id: str
    op: str
    all: bool
    inputs: tuple[Node, ...]
    fields: tuple[Field, ...] = ()

    def __init__(self, id: str, op: str, all: bool, inputs: tuple[Node, ...], fields: tuple[Field, ...] = ()) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "all", all)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "fields", fields)

    def children(self) -> tuple[Node, ...]:
        return self.inputs

    def with_children(self, kids: Sequence[Node]) -> Node:
        if all(a is b for a, b in zip(kids, self.inputs, strict=True)):
            return self
        return SetOp(self.id, self.op, self.all, tuple(kids), self.fields)


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Sort:
    id: str
    keys: tuple[SortKey, ...]
    input: Node
    limit: int | None = None

    def __init__(self, id: str, keys: tuple[SortKey, ...], input: Node, limit: int | None = None) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "input", input)
        object.__setattr__(self, "limit", limit)

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Sort(self.id, self.keys, kids[0], self.limit)


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Limit:
    id: str
    count: int | None
    offset: int
    input: Node

    def __init__(self, id: str, count: int | None, offset: int, input: Node) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "input", input)

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Limit(self.id, self.count, self.offset, kids[0])


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Window:
    id: str
    partition_by: tuple[Expr, ...]
    order_by: tuple[SortKey, ...]
    functions: tuple[NamedExpr, ...]
    input: Node

    def __init__(
        self,
        id: str,
        partition_by: tuple[Expr, ...],
        order_by: tuple[SortKey, ...],
        functions: tuple[NamedExpr, ...],
        input: Node,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "partition_by", partition_by)
        object.__setattr__(self, "order_by", order_by)
        object.__setattr__(self, "functions", functions)
        object.__setattr__(self, "input", input)

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return (
            self
            if kids[0] is self.input
            else Window(self.id, self.partition_by, self.order_by, self.functions, kids[0])
        )


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Distinct:
    id: str
    input: Node

    def __init__(self, id: str, input: Node) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "input", input)

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Distinct(self.id, kids[0])


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Alias:
    """``FROM (...) AS name``: same columns (same cids) under a new qualifier."""

    id: str
    name: str
    input: Node
    fields: tuple[Field, ...] = ()
    column_names: tuple[str, ...] | None = None

    def __init__(
        self,
        id: str,
        name: str,
        input: Node,
        fields: tuple[Field, ...] = (),
        column_names: tuple[str, ...] | None = None,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "input", input)
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "column_names", column_names)

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Alias(self.id, self.name, kids[0], self.fields, self.column_names)


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Generate:
    """Each input row joined to the rows ``generator`` makes of it (``costmodel.kinds.generate``)."""

    id: str
    generator: Expr
    outer: bool
    alias: str
    columns: tuple[Field, ...]
    input: Node

    def __init__(
        self, id: str, generator: Expr, outer: bool, alias: str, columns: tuple[Field, ...], input: Node
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "generator", generator)
        object.__setattr__(self, "outer", outer)
        object.__setattr__(self, "alias", alias)
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "input", input)

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return (
            self
            if kids[0] is self.input
            else Generate(self.id, self.generator, self.outer, self.alias, self.columns, kids[0])
        )


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Sample:
    """A sample of its input's rows (``costmodel.kinds.sample``)."""

    id: str
    fraction: float
    method: str
    seed: int | None
    input: Node

    def __init__(self, id: str, fraction: float, method: str, seed: int | None, input: Node) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "fraction", fraction)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "seed", seed)
        object.__setattr__(self, "input", input)

    def children(self) -> tuple[Node, ...]:
        return (self.input,)

    def with_children(self, kids: Sequence[Node]) -> Node:
        return self if kids[0] is self.input else Sample(self.id, self.fraction, self.method, self.seed, kids[0])


Node = Scan | Filter | Project | Aggregate | Join | SetOp | Sort | Limit | Window | Distinct | Alias | Generate | Sample
