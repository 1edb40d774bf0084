"""Selectivity estimation: one interface, several sources, each estimate names its source.

Sources are asked in order; the first that can answer wins. Today:
``ColumnStatsSource`` (NDV, min/max, null count, histogram, most common values
from the catalog) then ``DefaultSource`` (documented constants, see
docs/estimation.md). The sample-based source (``costmodel.sample.SampleSource``)
implements the same ``SelectivitySource`` protocol and goes first when a sample exists.

Compound predicates are combined here: AND multiplies (independence), OR is
inclusion-exclusion, NOT complements; the combined estimate reports the
weakest source among its parts. A source may answer a conjunction as a whole
(a sample can), in which case no multiplication happens.

Example::

    >>> est = SelectivityEstimate(0.1, 0.05, 0.2, "statistics")
    >>> est.selectivity
    0.1
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from costmodel.catalog import ColumnStats
from costmodel.expr import Call, Column, Expr, Literal, Subquery, like_regex
from costmodel.fold import Truth, constant_truth
from costmodel.trampoline import Step, run

#: Weakest last. A combined estimate reports the weakest source of its parts.
SOURCE_RANK = {"constant": 0, "feedback": 1, "sample": 1, "statistics": 2, "default": 3}
#: Sources that can answer a conjunction as a whole (correlated columns seen together): the sample, and the
#: rows a run observed (the service's feedback source, see service/feedback/learning.py).
JOINT_SOURCES = frozenset({"sample", "feedback"})

#: Documented defaults, used when nothing better is known (docs/estimation.md).
DEFAULTS: dict[str, float] = {
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
            "selectivity": round(self.selectivity, 6),
            "interval": [round(self.low, 6), round(self.high, 6)],
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


class SelectivitySource(Protocol):
    """Anything that can estimate some predicates; returns None when it cannot."""

    name: str

    def estimate(self, predicate: Expr, columns: Mapping[int, ColumnInfo]) -> SelectivityEstimate | None: ...


def _clamp(x: float) -> float:
    return min(1.0, max(0.0, x))


def _interval(s: float, factor: float = 2.0) -> tuple[float, float]:
    return _clamp(s / factor), _clamp(s * factor) if s > 0 else 0.0


def _comparable(value: Any) -> float | None:
    """Map numbers, ISO dates and timestamps onto a line so ranges can interpolate."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            if len(value) == 10:
                return float(dt.date.fromisoformat(value).toordinal())
            stamp = dt.datetime.fromisoformat(value)
            return stamp.toordinal() + (stamp.hour * 3600 + stamp.minute * 60 + stamp.second) / 86400
        except ValueError:
            return None
    return None


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return bool(a == b)


def _split_column_literal(pred: Call) -> tuple[Column, str, Any] | None:
    """``col op lit`` or ``lit op col`` (flipped), looking through casts of the column."""
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
    left, right = pred.args
    if isinstance(left, Call) and left.fn == "cast" and isinstance(left.args[0], Column):
        left = left.args[0]
    if isinstance(right, Call) and right.fn == "cast" and isinstance(right.args[0], Column):
        right = right.args[0]
    if isinstance(left, Column) and isinstance(right, Literal):
        return left, pred.fn, right.value
    if isinstance(right, Column) and isinstance(left, Literal) and pred.fn in flip:
        return right, flip[pred.fn], left.value
    return None


class ColumnStatsSource:
    """Estimates from catalog statistics: MCVs, histograms, min/max, NDV, null counts."""

    name = "statistics"

    def estimate(self, predicate: Expr, columns: Mapping[int, ColumnInfo]) -> SelectivityEstimate | None:
        s = self._estimate(predicate, columns)
        if s is None:
            return None
        low, high = _interval(s)
        return SelectivityEstimate(s, low, high, self.name)

    def _info(self, col: Column, columns: Mapping[int, ColumnInfo]) -> ColumnInfo | None:
        info = columns.get(col.cid)
        return info if info is not None and info.stats is not None else None

    def _estimate(self, pred: Expr, columns: Mapping[int, ColumnInfo]) -> float | None:
        if not isinstance(pred, Call):
            return None
        fn = pred.fn
        if fn in ("=", "!=", "<", "<=", ">", ">=") and len(pred.args) == 2:
            split = _split_column_literal(pred)
            if split is None:
                return self._column_pair(pred, columns)
            col, op, value = split
            info = self._info(col, columns)
            if info is None:
                return None
            if value is None:
                return 0.0
            if op == "=":
                return self._eq(info, value)
            if op == "!=":
                eq = self._eq(info, value)
                return None if eq is None else _clamp(1 - (info.null_fraction or 0.0) - eq)
            return self._range(info, op, value)
        if fn == "between" and isinstance(pred.args[0], Column):
            info = self._info(pred.args[0], columns)
            lo, hi = pred.args[1], pred.args[2]
            if info is None or not isinstance(lo, Literal) or not isinstance(hi, Literal):
                return None
            below_hi = self._range(info, "<=", hi.value)
            below_lo = self._range(info, "<", lo.value)
            if below_hi is None or below_lo is None:
                return None
            return _clamp(below_hi - below_lo)
        if fn == "in" and isinstance(pred.args[0], Column):
            info = self._info(pred.args[0], columns)
            if info is None or not all(isinstance(a, Literal) for a in pred.args[1:]):
                return None
            total = 0.0
            for value in {repr(a.value): a.value for a in pred.args[1:] if isinstance(a, Literal)}.values():
                if value is None:
                    continue
                eq = self._eq(info, value)
                if eq is None:
                    return None
                total += eq
            return _clamp(min(total, 1 - (info.null_fraction or 0.0)))
        if fn in ("is_null", "is_not_null") and isinstance(pred.args[0], Column):
            info = columns.get(pred.args[0].cid)
            frac = info.null_fraction if info is not None else None
            if frac is None:
                return None
            return frac if fn == "is_null" else 1 - frac
        if fn in ("like", "not_like") and isinstance(pred.args[0], Column) and isinstance(pred.args[1], Literal):
            info = self._info(pred.args[0], columns)
            if info is None or info.stats is None or not info.stats.mcv or not isinstance(pred.args[1].value, str):
                return None
            return self._like_from_mcv(info, pred.args[1].value, negate=fn == "not_like")
        return None

    def _eq(self, info: ColumnInfo, value: Any) -> float | None:
        stats = info.stats
        assert stats is not None
        if stats.mcv:
            for mcv_value, freq in stats.mcv:
                if _equal(mcv_value, value):
                    return freq
        point = _comparable(value)
        lo, hi = _comparable(stats.min), _comparable(stats.max)
        if point is not None and lo is not None and hi is not None and not lo <= point <= hi:
            return 0.0
        strings = isinstance(value, str) and isinstance(stats.min, str) and isinstance(stats.max, str)
        if strings and point is None and not stats.min <= value <= stats.max:
            return 0.0
        if stats.ndv:
            mcv_mass = sum(freq for _, freq in stats.mcv) if stats.mcv else 0.0
            rest = max(1.0, stats.ndv - (len(stats.mcv) if stats.mcv else 0))
            return _clamp((1 - (info.null_fraction or 0.0) - mcv_mass) / rest)
        return None

    def _range(self, info: ColumnInfo, op: str, value: Any) -> float | None:
        """Fraction of all rows with ``column op value``."""
        stats = info.stats
        assert stats is not None
        non_null = 1 - (info.null_fraction or 0.0)
        point = _comparable(value)
        if point is None:
            return None
        below: float | None = None
        if stats.histogram:
            bounds = [_comparable(b) for b in stats.histogram]
            if all(b is not None for b in bounds):
                below = _histogram_below(bounds, point)  # type: ignore[arg-type]
        if below is None:
            lo, hi = _comparable(stats.min), _comparable(stats.max)
            if lo is None or hi is None:
                return None
            if hi <= lo:
                below = 0.0 if point < lo else 1.0 if point > lo else 0.5
            else:
                below = _clamp((point - lo) / (hi - lo))
        if op in ("<", "<="):
            return _clamp(below * non_null)
        return _clamp((1 - below) * non_null)

    def _column_pair(self, pred: Call, columns: Mapping[int, ColumnInfo]) -> float | None:
        left, right = pred.args
        if pred.fn == "=" and isinstance(left, Column) and isinstance(right, Column):
            a, b = self._info(left, columns), self._info(right, columns)
            ndvs = [i.stats.ndv for i in (a, b) if i is not None and i.stats is not None and i.stats.ndv]
            if ndvs:
                return 1 / max(ndvs)
        return None

    def _like_from_mcv(self, info: ColumnInfo, pattern: str, negate: bool) -> float | None:
        regex = like_regex(pattern)
        stats = info.stats
        assert stats is not None and stats.mcv
        covered = sum(freq for _, freq in stats.mcv)
        matched = sum(freq for value, freq in stats.mcv if isinstance(value, str) and regex.match(value))
        non_null = 1 - (info.null_fraction or 0.0)
        rest = max(0.0, non_null - covered)
        like = matched + rest * DEFAULTS["like"]
        return _clamp(non_null - like) if negate else _clamp(like)


def _histogram_below(bounds: Sequence[float], point: float) -> float:
    """Fraction of non-null values below ``point`` in an equi-depth histogram."""
    buckets = len(bounds) - 1
    if point <= bounds[0]:
        return 0.0
    if point >= bounds[-1]:
        return 1.0
    for i in range(buckets):
        lo, hi = bounds[i], bounds[i + 1]
        if lo <= point <= hi:
            inside = 0.5 if hi == lo else (point - lo) / (hi - lo)
            return (i + inside) / buckets
    return 1.0


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
DEFAULT_SOURCES: tuple[SelectivitySource, ...] = (ColumnStatsSource(),)


@dataclass
class Estimator:
    """Estimates a predicate's selectivity through a chain of sources, with a cache."""

    columns: Mapping[int, ColumnInfo]
    sources: tuple[SelectivitySource, ...] = DEFAULT_SOURCES

    def __post_init__(self) -> None:
        self._cache: dict[Expr, SelectivityEstimate] = {}
        self._default = DefaultSource()

    def estimate(self, predicate: Expr) -> SelectivityEstimate:
        return run(self._cached(predicate))

    def _cached(self, predicate: Expr) -> Step[SelectivityEstimate]:
        """Trampolined (``costmodel.trampoline``): AND, OR and NOT may nest 10,000 levels."""
        fresh: SelectivityEstimate
        try:
            cached = self._cache.get(predicate)
        except TypeError:  # an unhashable literal value
            fresh = yield self._estimate(predicate)
            return fresh
        if cached is None:
            cached = yield self._estimate(predicate)
            self._cache[predicate] = cached
        return cached

    def _estimate(self, pred: Expr) -> Step[SelectivityEstimate]:
        truth = constant_truth(pred)  # a = NULL reads a column and is still never true
        if truth is Truth.TRUE:
            return SelectivityEstimate(1.0, 1.0, 1.0, "constant")
        if truth is Truth.FALSE:
            return SelectivityEstimate(0.0, 0.0, 0.0, "constant")
        for source in self.sources:
            found = source.estimate(pred, self.columns)
            if found is not None:
                return found
        if isinstance(pred, Call) and pred.fn in ("and", "or", "not"):
            parts: list[SelectivityEstimate] = []
            for arg in pred.args:
                parts.append((yield self._cached(arg)))
            weakest = max((p.source for p in parts), key=lambda s: SOURCE_RANK.get(s, 9))
            if pred.fn == "and":
                s, lo, hi = 1.0, 1.0, 1.0
                for p in parts:
                    s, lo, hi = s * p.selectivity, lo * p.low, hi * p.high
            elif pred.fn == "or":
                s, lo, hi = 0.0, 0.0, 0.0
                for p in parts:
                    s = s + p.selectivity - s * p.selectivity
                    lo = max(lo, p.low)
                    hi = min(1.0, hi + p.high)
            else:
                p = parts[0]
                s, lo, hi = 1 - p.selectivity, 1 - p.high, 1 - p.low
            return SelectivityEstimate(_clamp(s), _clamp(lo), _clamp(hi), weakest)
        return self._default.estimate(pred, self.columns)
