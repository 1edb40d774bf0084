"""The parts plan nodes hold besides expressions and inputs: output fields, named expressions, sort keys, window
frames and index lookups (re-exported by ``costmodel.plan``).

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
