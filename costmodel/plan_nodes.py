"""The plan's node and field classes (``costmodel.plan`` holds what works on them, and re-exports them).

Each class writes its ``__init__`` out: compiled, that is a native constructor (docs/decisions/0003-compiled-engine.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.expr import Column, Expr


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Field:
    cid: int
    name: str
    qualifier: str | None = None
    type: str = "unknown"

    def __init__(self, cid: int, name: str, qualifier: str | None = None, type: str = "unknown") -> None:
        object.__setattr__(self, "cid", cid)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "qualifier", qualifier)
        object.__setattr__(self, "type", type)

    def column(self) -> Column:
        spelled = f"{self.qualifier}.{self.name}" if self.qualifier else self.name
        return Column(spelled, self.cid, self.type)


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class WindowFrame:
    """A window function's frame, ``ROWS BETWEEN 1 PRECEDING AND CURRENT ROW``.

    ``kind`` is ``rows`` or ``range``; a bound is ``unbounded preceding``,
    ``N preceding``, ``current row``, ``N following`` or ``unbounded following``.
    """

    kind: str = "rows"
    start: str = "unbounded preceding"
    end: str = "current row"

    def __init__(self, kind: str = "rows", start: str = "unbounded preceding", end: str = "current row") -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    def sql(self) -> str:
        return f"{self.kind.upper()} BETWEEN {self.start.upper()} AND {self.end.upper()}"


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class NamedExpr:
    """``expr AS name``; ``cid`` is the output column it defines."""

    expr: Expr
    name: str
    cid: int = -1
    qualifier: str | None = None
    partition_by: tuple[Expr, ...] | None = None  # per-function window partition, when it differs
    frame: WindowFrame | None = None  # a window function's frame, when it has one

    def __init__(
        self,
        expr: Expr,
        name: str,
        cid: int = -1,
        qualifier: str | None = None,
        partition_by: tuple[Expr, ...] | None = None,
        frame: WindowFrame | None = None,
    ) -> None:
        object.__setattr__(self, "expr", expr)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "cid", cid)
        object.__setattr__(self, "qualifier", qualifier)
        object.__setattr__(self, "partition_by", partition_by)
        object.__setattr__(self, "frame", frame)


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class SortKey:
    expr: Expr
    desc: bool = False
    nulls_first: bool | None = None

    def __init__(self, expr: Expr, desc: bool = False, nulls_first: bool | None = None) -> None:
        object.__setattr__(self, "expr", expr)
        object.__setattr__(self, "desc", desc)
        object.__setattr__(self, "nulls_first", nulls_first)


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class IndexLookup:
    """Scan through an index (Dolt's "Indexed table access on index [...]")."""

    index: str
    columns: tuple[str, ...]
    predicates: tuple[Expr, ...]

    def __init__(self, index: str, columns: tuple[str, ...], predicates: tuple[Expr, ...]) -> None:
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "predicates", predicates)


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


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Filter:
    id: str
    predicate: Expr
    input: Node

    def __init__(self, id: str, predicate: Expr, input: Node) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "predicate", predicate)
        object.__setattr__(self, "input", input)


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Project:
    id: str
    exprs: tuple[NamedExpr, ...]
    input: Node

    def __init__(self, id: str, exprs: tuple[NamedExpr, ...], input: Node) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "exprs", exprs)
        object.__setattr__(self, "input", input)


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


@dataclass(frozen=True, slots=True, init=False)  # __init__ written out: see docs/decisions/0003-compiled-engine.md
class Distinct:
    id: str
    input: Node

    def __init__(self, id: str, input: Node) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "input", input)


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


Node = Scan | Filter | Project | Aggregate | Join | SetOp | Sort | Limit | Window | Distinct | Alias | Generate | Sample
