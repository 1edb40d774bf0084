"""The vocabulary of selectivity estimation: an estimate, a base column's statistics, a source, the defaults.

Shared by ``costmodel.estimate`` (the chain of sources and how compound predicates combine) and the sources
(``costmodel.estimate_stats``, ``costmodel.sample``, the service's feedback source).

    >>> interval(0.1)
    (0.05, 0.2)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from costmodel.catalog import ColumnStats, TableInfo
from costmodel.expr import Expr
from costmodel.rounding import rounded

#: Weakest last. A combined estimate reports the weakest source of its parts.
SOURCE_RANK: Final = {"constant": 0, "feedback": 1, "sample": 1, "statistics": 2, "default": 3}
#: Sources that can answer a conjunction as a whole (correlated columns seen together): the sample, and the
#: rows a run observed (the service's feedback source, see service/feedback/learning.py).
JOINT_SOURCES: Final = frozenset({"sample", "feedback"})

#: Documented defaults, used when nothing better is known (docs/estimation.md).
DEFAULTS: Final[dict[str, float]] = {
    "=": 0.1,
    "!=": 0.9,
    "range": 1 / 3,
    "between": 0.25,
    "like": 0.1,
    "not_like": 0.9,
    "regex": 0.1,
    "in_item": 0.1,
    "in_max": 0.5,
    "is_null": 0.1,
    "is_not_null": 0.9,
    "column_equality": 0.1,
    "boolean_column": 0.5,
    "exists": 0.5,
    "in_subquery": 0.5,
    "other": 0.5,
}


@dataclass(frozen=True, slots=True)
class SelectivityEstimate:
    """Fraction of rows a predicate keeps, with an interval and where it came from."""

    selectivity: float
    low: float
    high: float
    source: str
    sample_size: int | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "selectivity": rounded(self.selectivity, 6),
            "interval": [rounded(self.low, 6), rounded(self.high, 6)],
            "source": self.source,
        }
        if self.sample_size is not None:
            out["sample_size"] = self.sample_size
        return out


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    """Statistics of a base column, with its table's row count."""

    stats: ColumnStats | None
    table_rows: float | None
    table: str
    column: str

    @property
    def null_fraction(self) -> float | None:
        if self.stats is None or self.stats.null_count is None or not self.table_rows:
            return None
        return min(1.0, self.stats.null_count / self.table_rows)


def column_info(table: TableInfo | None, spelled: str, column: str) -> ColumnInfo:
    """``column``'s statistics in ``table`` (``spelled`` as the scan names the table), made once per table of a
    catalog (``TableInfo.column_infos``): a catalog outlives its requests (``catalog_from_wire``'s memo), and every
    optimization asked for the same ones again."""
    if table is None:
        return ColumnInfo(None, None, spelled, column)
    info: ColumnInfo | None = table.column_infos.get(column)
    if info is None or info.table != spelled:
        info = ColumnInfo(table.stats_for(column), table.row_count, spelled, column)
        table.column_infos[column] = info
    return info


class SelectivitySource(Protocol):
    """Anything that can estimate some predicates; returns None when it cannot."""

    name: str

    def estimate(self, predicate: Expr, columns: Mapping[int, ColumnInfo]) -> SelectivityEstimate | None: ...


def clamp(x: float) -> float:
    return min(1.0, max(0.0, x))


def interval(s: float, factor: float = 2.0) -> tuple[float, float]:
    return clamp(s / factor), clamp(s * factor) if s > 0 else 0.0
