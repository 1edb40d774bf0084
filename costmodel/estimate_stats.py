"""Selectivity from catalog statistics: most common values, histograms, min/max, NDV and null counts.

The first source of the default chain (``costmodel.estimate.DEFAULT_SOURCES``); it answers a single
comparison of a column with a literal, a column pair, IS NULL, IN lists and LIKE, a conjunction of bounds on one
column as the interval they leave (``costmodel.estimate_ranges``), and leaves the rest to the next source.

    >>> from costmodel.catalog import ColumnStats
    >>> info = ColumnInfo(ColumnStats(ndv=10), 1000.0, "t", "a")
    >>> ColumnStatsSource().estimate(Call("=", (Column("a", 1), Literal(3))), {1: info}).selectivity
    0.1
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from costmodel.estimate_ranges import Bound, bound_of
from costmodel.estimate_types import DEFAULTS, ColumnInfo, SelectivityEstimate, clamp, interval
from costmodel.expr import Call, Column, Expr, Literal, like_regex


def _comparable(value: Any) -> float | None:
    """Map numbers, ISO dates and timestamps onto a line so ranges can interpolate."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if not value[:4].isdigit():  # not a date: answered without the ValueError parsing would raise
            return None
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
        low, high = interval(s)
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
                return None if eq is None else clamp(1 - (info.null_fraction or 0.0) - eq)
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
            return clamp(below_hi - below_lo)
        if fn == "and":
            return self._interval(pred.args, columns)
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
            return clamp(min(total, 1 - (info.null_fraction or 0.0)))
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

    def _interval(self, parts: tuple[Expr, ...], columns: Mapping[int, ColumnInfo]) -> float | None:
        """Bounds on one column, all of them: the rows between the highest lower bound and the lowest upper
        bound (``below(upper) - below(lower)``, as BETWEEN), not the product of each bound's fraction."""
        found = [bound_of(part) for part in parts]
        bounds = [b for b in found if b is not None]
        if not bounds or len(bounds) != len(found) or len({b.cid for b in bounds}) != 1:
            return None
        info = columns.get(bounds[0].cid)
        if info is None or info.stats is None:
            return None
        lower = _tightest(bounds, lower=True)
        upper = _tightest(bounds, lower=False)
        if lower is _UNORDERED or upper is _UNORDERED:
            return None
        below_upper = (1 - (info.null_fraction or 0.0)) if upper is None else self._range(info, "<=", upper)
        below_lower = 0.0 if lower is None else self._range(info, "<", lower)
        if below_upper is None or below_lower is None:
            return None
        return clamp(below_upper - below_lower)

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
            return clamp((1 - (info.null_fraction or 0.0) - mcv_mass) / rest)
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
            below = (0.0 if point < lo else 1.0 if point > lo else 0.5) if hi <= lo else clamp((point - lo) / (hi - lo))
        if op in ("<", "<="):
            return clamp(below * non_null)
        return clamp((1 - below) * non_null)

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
        return clamp(non_null - like) if negate else clamp(like)


#: bounds that do not all map onto the line (a string that is no date): no interval
_UNORDERED = object()


def _tightest(bounds: list[Bound], lower: bool) -> Any:
    """The highest lower bound (``lower``) or the lowest upper bound; None when there is none, ``_UNORDERED``
    when one of them does not map onto the line."""
    values = [b.lower if lower else b.upper for b in bounds]
    values = [v for v in values if v is not None]
    if not values:
        return None
    placed: list[tuple[float, Any]] = []
    for value in values:
        point = _comparable(value)
        if point is None:
            return _UNORDERED
        placed.append((point, value))
    pick = max if lower else min
    return pick(placed, key=lambda pair: pair[0])[1]


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
