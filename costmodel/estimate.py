"""Selectivity estimation: one interface, several sources, each estimate names its source.

Sources are asked in order; the first that can answer wins. Today:
``ColumnStatsSource`` (NDV, min/max, null count, histogram, most common values
from the catalog) then ``DefaultSource`` (documented constants, see
docs/estimation.md). The sample-based source (``costmodel.sample.SampleSource``)
implements the same ``SelectivitySource`` protocol and goes first when a sample exists.

Compound predicates are combined here: AND multiplies (independence), OR is
inclusion-exclusion, NOT complements; the combined estimate reports the
weakest source among its parts. A source may answer a conjunction as a whole
(a sample can), in which case no multiplication happens. Bounds on one column
(``d >= x AND d < y``) are one part of an AND, an interval
(``costmodel.estimate_ranges``), not factors of it.

Example::

    >>> est = SelectivityEstimate(0.1, 0.05, 0.2, "statistics")
    >>> est.selectivity
    0.1
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Final

from costmodel.estimate_ranges import grouped_bounds
from costmodel.estimate_stats import ColumnStatsSource
from costmodel.estimate_types import (
    DEFAULTS,
    JOINT_SOURCES,
    SOURCE_RANK,
    ColumnInfo,
    SelectivityEstimate,
    SelectivitySource,
    clamp,
)
from costmodel.expr import Call, Column, Expr, Subquery
from costmodel.fold import Truth, constant_truth
from costmodel.trampoline import Done, Step, run

__all__ = [
    "DEFAULTS",
    "DEFAULT_SOURCES",
    "JOINT_SOURCES",
    "SOURCE_RANK",
    "ColumnInfo",
    "ColumnStatsSource",
    "DefaultSource",
    "Estimator",
    "SelectivityEstimate",
    "SelectivitySource",
]


class DefaultSource:
    """The documented constants; always answers."""

    name = "default"

    def estimate(self, predicate: Expr, columns: Mapping[int, ColumnInfo]) -> SelectivityEstimate:
        s = self._guess(predicate)
        return SelectivityEstimate(s, 0.0, 1.0, self.name)

    def _guess(self, pred: Expr) -> float:
        if isinstance(pred, Column):
            return DEFAULTS["boolean_column"]
        if isinstance(pred, Subquery):
            return DEFAULTS["exists"] if pred.kind == "exists" else DEFAULTS["in_subquery"]
        if not isinstance(pred, Call):
            return DEFAULTS["other"]
        fn = pred.fn
        if fn == "=":
            if all(isinstance(a, Column) for a in pred.args):
                return DEFAULTS["column_equality"]
            return DEFAULTS["="]
        if fn in ("!=", "<>"):
            return DEFAULTS["!="]
        if fn in ("<", "<=", ">", ">="):
            return DEFAULTS["range"]
        if fn == "between":
            return DEFAULTS["between"]
        if fn in ("like", "ilike"):
            return DEFAULTS["like"]
        if fn == "not_like":
            return DEFAULTS["not_like"]
        if fn in ("rlike", "regexp", "regexp_like"):
            return DEFAULTS["regex"]
        if fn == "in":
            return min(DEFAULTS["in_max"], DEFAULTS["in_item"] * (len(pred.args) - 1))
        if fn in ("is_null", "is_not_null"):
            return DEFAULTS[fn]
        return DEFAULTS["other"]


#: The chain when no sample is known: catalog statistics, then (always) the defaults.
DEFAULT_SOURCES: Final[tuple[SelectivitySource, ...]] = (ColumnStatsSource(),)


@dataclass
class Estimator:
    """Estimates a predicate's selectivity through a chain of sources, with a cache."""

    columns: Mapping[int, ColumnInfo]
    sources: tuple[SelectivitySource, ...] = DEFAULT_SOURCES

    def __post_init__(self) -> None:
        self._cache: dict[Expr, SelectivityEstimate] = {}
        #: the same answers by object: most calls repeat an object, which then costs no structural hash
        self._by_object: dict[int, tuple[Expr, SelectivityEstimate]] = {}
        self._default = DefaultSource()

    def estimate(self, predicate: Expr) -> SelectivityEstimate:
        seen = self._by_object.get(id(predicate))
        if seen is not None and seen[0] is predicate:
            return seen[1]
        known = self._known(predicate)  # a predicate met before is answered without a trampoline step
        found = known if known is not None else run(self._cached(predicate))
        self._by_object[id(predicate)] = (predicate, found)
        return found

    def _known(self, predicate: Expr) -> SelectivityEstimate | None:
        """The estimate of an equal predicate met before; None when there is none or it cannot be hashed."""
        try:
            return self._cache.get(predicate)
        except TypeError:  # an unhashable literal value
            return None

    def _cached(self, predicate: Expr) -> Step[SelectivityEstimate]:
        """Trampolined (``costmodel.trampoline``): AND, OR and NOT may nest 10,000 levels."""
        known = self._known(predicate)
        if known is None:
            known = yield self._estimate(predicate)
            with suppress(TypeError):  # an unhashable literal value: estimated again when asked again
                self._cache[predicate] = known
        yield Done(known)

    def _estimate(self, pred: Expr) -> Step[SelectivityEstimate]:
        found = self._whole(pred)
        if found is None and isinstance(pred, Call) and pred.fn in ("and", "or", "not"):
            parts: list[SelectivityEstimate] = []
            args = (grouped_bounds(pred.args) if pred.fn == "and" else None) or pred.args
            for arg in args:
                parts.append((yield self._cached(arg)))
            found = _combined(pred.fn, parts)
        yield Done(found if found is not None else self._default.estimate(pred, self.columns))

    def _whole(self, pred: Expr) -> SelectivityEstimate | None:
        """``pred`` estimated as a whole: its constant truth or the first source that knows it; None if none."""
        truth = constant_truth(pred)  # a = NULL reads a column and is still never true
        if truth is Truth.TRUE:
            return SelectivityEstimate(1.0, 1.0, 1.0, "constant")
        if truth is Truth.FALSE:
            return SelectivityEstimate(0.0, 0.0, 0.0, "constant")
        for source in self.sources:
            found = source.estimate(pred, self.columns)
            if found is not None:
                return found
        return None


def _combined(fn: str, parts: list[SelectivityEstimate]) -> SelectivityEstimate:
    """AND, OR or NOT of its operands' estimates (independence assumed), as sure as the least sure of them."""
    weakest = max((p.source for p in parts), key=lambda s: SOURCE_RANK.get(s, 9))
    if fn == "and":
        s, lo, hi = 1.0, 1.0, 1.0
        for p in parts:
            s, lo, hi = s * p.selectivity, lo * p.low, hi * p.high
    elif fn == "or":
        s, lo, hi = 0.0, 0.0, 0.0
        for p in parts:
            s = s + p.selectivity - s * p.selectivity
            lo = max(lo, p.low)
            hi = min(1.0, hi + p.high)
    else:
        p = parts[0]
        s, lo, hi = 1 - p.selectivity, 1 - p.high, 1 - p.low
    return SelectivityEstimate(clamp(s), clamp(lo), clamp(hi), weakest)
