"""The parts plan nodes hold besides expressions and inputs: output fields, named expressions, sort keys, window
frames and index lookups (re-exported by ``costmodel.plan``).
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.expr import Column, Expr


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
