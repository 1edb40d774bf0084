"""Selectivity from a uniform random sample of a table, evaluated with numpy under SQL's three-valued logic.

A ``Sample`` holds, per column, a numpy array of values and a boolean mask of
NULLs. ``SampleSource`` evaluates a predicate over a table's sample: a row
counts when the predicate is TRUE (not FALSE, not NULL). The estimate is the
matching fraction with a Wilson score interval. A conjunction is evaluated as
a whole, so correlated columns (``l_shipdate > X AND l_receiptdate > X``) are
estimated jointly rather than multiplied.

When the sample holds too few matching rows for a tight interval the source
declines, and the chain falls back to statistics and then to defaults.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from costmodel.expr import Call, Column, Expr, Literal, like_regex

if TYPE_CHECKING:
    from costmodel.estimate import ColumnInfo, SelectivityEstimate, SelectivitySource


@dataclass(frozen=True)
class Sample:
    """A uniform random sample of one table.

    ``values[column]`` is a 1-d numpy array (numbers as int64/float64, dates as
    ``datetime64[D]``, timestamps as ``datetime64[us]``, strings as object
    arrays); ``nulls[column]`` is a bool array, True where the value is NULL
    (the value there is a placeholder and is never read).
    """

    table: str
    table_rows: float
    values: dict[str, np.ndarray] = field(default_factory=dict)
    nulls: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def size(self) -> int:
        for array in self.values.values():
            return int(array.shape[0])
        return 0

    def column(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        if name in self.values:
            return self.values[name], self.nulls[name]
        lowered = name.lower()
        for key in self.values:
            if key.lower() == lowered:
                return self.values[key], self.nulls[key]
        return None

    @staticmethod
    def from_columns(table: str, table_rows: float, columns: dict[str, list[Any] | np.ndarray]) -> Sample:
        """Build from Python lists where ``None`` is NULL (tests and small callers)."""
        values: dict[str, np.ndarray] = {}
        nulls: dict[str, np.ndarray] = {}
        for name, raw in columns.items():
            items = list(raw)
            mask = np.array([v is None for v in items], dtype=bool)
            present = [v for v in items if v is not None]
            if not present:  # all NULL: the placeholders are never read, numbers compare with anything numeric
                array = np.zeros(len(items), dtype=np.int64)
            elif all(isinstance(v, bool) for v in present):
                array = np.array([bool(v) if v is not None else False for v in items], dtype=bool)
            elif all(isinstance(v, int) and not isinstance(v, bool) for v in present):
                array = np.array([v if v is not None else 0 for v in items], dtype=np.int64)
            elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
                array = np.array([float(v) if v is not None else 0.0 for v in items], dtype=np.float64)
            else:
                array = np.array([v if v is not None else "" for v in items], dtype=object)
            values[name] = array
            nulls[name] = mask
        return Sample(table, float(table_rows), values, nulls)


# ------------------------------------------------------------------ evaluation


#: A boolean under three-valued logic, row by row: (is TRUE, is FALSE); neither means NULL.
Truths = tuple[np.ndarray, np.ndarray]
#: A scalar row by row: (values, is NULL).
Values = tuple[np.ndarray, np.ndarray]

#: Fewer matching sample rows than this and the estimate is too loose: statistics are asked first.
MIN_MATCHES: Final = 10
_Z: Final = 1.959963984540054  # 95%


class Unsupported(Exception):
    """The predicate holds something the sample evaluator does not model; another source answers."""


def wilson_interval(matches: int, n: int, z: float = _Z) -> tuple[float, float]:
    """95% Wilson score interval for a proportion: sound near 0 and 1, unlike the normal approximation."""
    if n == 0:
        return 0.0, 1.0
    p = matches / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _coerce_literal(value: Any, like: np.ndarray) -> Any:
    """A literal in the array's terms: ISO strings against dates, numbers against numbers."""
    if value is None:
        return None
    kind = like.dtype.kind
    if kind == "M" and isinstance(value, str):
        try:
            return np.datetime64(value, "D") if like.dtype == np.dtype("datetime64[D]") else np.datetime64(value)
        except ValueError as exc:
            raise Unsupported(f"not a date: {value!r}") from exc
    if kind in "iuf" and isinstance(value, str):
        try:
            return float(value)
        except ValueError as exc:
            raise Unsupported(f"not a number: {value!r}") from exc
    if kind in "iufb" and not isinstance(value, (int, float, bool, np.number)):
        raise Unsupported(f"cannot compare {value!r} with numbers")
    return value


class _Evaluator:
    def __init__(self, sample: Sample, names: Mapping[int, str]):
        self.sample = sample
        self.names = names
        self.n = sample.size

    # ------------------------------------------------------------ scalars

    def values(self, expr: Expr, like: np.ndarray | None = None) -> Values:
        n = self.n
        if isinstance(expr, Column):
            name = self.names.get(expr.cid)
            found = self.sample.column(name) if name is not None else None
            if found is None:
                raise Unsupported(f"column {expr.name} is not in the sample")
            return found
        if isinstance(expr, Literal):
            value = _coerce_literal(expr.value, like) if like is not None else expr.value
            if value is None:
                return np.zeros(n, dtype=bool), np.ones(n, dtype=bool)
            if expr.type == "date" and isinstance(value, str):
                value = np.datetime64(value, "D")
            array = np.empty(n, dtype=object) if isinstance(value, str) else None
            if array is not None:
                array[:] = value
            else:
                array = np.full(n, value)
            return array, np.zeros(n, dtype=bool)
        if not isinstance(expr, Call):
            raise Unsupported("subquery")
        fn = expr.fn
        if fn in ("+", "-", "*", "/") and len(expr.args) == 2:
            (a, na), (b, nb) = self.pair(expr.args[0], expr.args[1])
            if a.dtype.kind not in "iuf" or b.dtype.kind not in "iuf":
                raise Unsupported("arithmetic on non-numbers")
            nulls = na | nb
            with np.errstate(divide="ignore", invalid="ignore"):
                if fn == "+":
                    out = a + b
                elif fn == "-":
                    out = a - b
                elif fn == "*":
                    out = a * b
                else:
                    zero = b == 0
                    out = np.where(zero, 0.0, a / np.where(zero, 1, b))
                    nulls = nulls | zero  # Spark outside ANSI mode: x / 0 is NULL
            return out, nulls
        if fn == "cast" and len(expr.args) == 1:
            return self.cast(self.values(expr.args[0]), (expr.type or "").split("(")[0].lower())
        if fn == "coalesce":
            parts = [self.values(a, like) for a in expr.args]
            out, nulls = parts[0][0].copy(), parts[0][1].copy()
            for values, mask in parts[1:]:
                take = nulls & ~mask
                out = np.where(take, values, out)
                nulls = nulls & mask
            return out, nulls
        if fn in ("upper", "lower") and len(expr.args) == 1:
            values, nulls = self.values(expr.args[0])
            convert = str.upper if fn == "upper" else str.lower
            return np.array([convert(v) if isinstance(v, str) else v for v in values], dtype=object), nulls
        if fn in ("substring", "substr") and len(expr.args) in (2, 3):
            values, nulls = self.values(expr.args[0])
            bounds = [a.value if isinstance(a, Literal) else None for a in expr.args[1:]]
            start, length = bounds[0], bounds[1] if len(bounds) == 2 else None
            if not isinstance(start, int) or (len(bounds) == 2 and not isinstance(length, int)):
                raise Unsupported("substring with computed bounds")
            begin = max(start - 1, 0)
            end = None if length is None else begin + length
            return np.array([v[begin:end] if isinstance(v, str) else v for v in values], dtype=object), nulls
        if fn in ("year", "month") and len(expr.args) == 1:
            values, nulls = self.values(expr.args[0])
            if values.dtype.kind != "M":
                raise Unsupported("year of a non-date")
            years = values.astype("datetime64[Y]").astype(np.int64) + 1970
            if fn == "year":
                return years, nulls
            months = values.astype("datetime64[M]").astype(np.int64) % 12 + 1
            return months, nulls
        raise Unsupported(f"function {fn}")

    def cast(self, source: Values, target: str) -> Values:
        """Spark's CAST outside ANSI mode: what does not convert becomes NULL."""
        values, nulls = source
        if target in ("int", "bigint", "smallint", "tinyint", "long", "integer"):
            if values.dtype.kind in "iu":
                return values.astype(np.int64), nulls
            if values.dtype.kind == "f":
                return np.trunc(values).astype(np.int64), nulls
            parsed = [_parse(v, int) for v in values]
        elif target in ("double", "float", "decimal", "real"):
            if values.dtype.kind in "iuf":
                return values.astype(np.float64), nulls
            parsed = [_parse(v, float) for v in values]
        elif target in ("string", "varchar"):
            return np.array([str(v) for v in values], dtype=object), nulls
        elif target == "date":
            if values.dtype.kind == "M":
                return values.astype("datetime64[D]"), nulls
            parsed = [_parse(v, lambda text: np.datetime64(str(text)[:10], "D")) for v in values]
            failed = np.array([p is None for p in parsed], dtype=bool)
            out = np.array([p if p is not None else np.datetime64(0, "D") for p in parsed], dtype="datetime64[D]")
            return out, nulls | failed
        else:
            raise Unsupported(f"cast to {target}")
        failed = np.array([p is None for p in parsed], dtype=bool)
        kind = np.int64 if target in ("int", "bigint", "smallint", "tinyint", "long", "integer") else np.float64
        return np.array([p if p is not None else 0 for p in parsed], dtype=kind), nulls | failed

    def pair(self, left: Expr, right: Expr) -> tuple[Values, Values]:
        """Both sides, literals coerced to the other side's type."""
        if isinstance(left, Literal) and not isinstance(right, Literal):
            b = self.values(right)
            return self.values(left, b[0]), b
        a = self.values(left)
        return a, self.values(right, a[0])

    # ------------------------------------------------------------ booleans

    def truths(self, expr: Expr) -> Truths:
        n = self.n
        if isinstance(expr, Literal):
            if expr.value is None:
                return np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
            if isinstance(expr.value, bool):
                return np.full(n, expr.value), np.full(n, not expr.value)
            raise Unsupported("a non-boolean literal as a predicate")
        if isinstance(expr, Column):
            values, nulls = self.values(expr)
            if values.dtype != bool:
                raise Unsupported("a non-boolean column as a predicate")
            return values & ~nulls, ~values & ~nulls
        if not isinstance(expr, Call):
            raise Unsupported("subquery")
        fn = expr.fn
        if fn == "and":
            parts = [self.truths(a) for a in expr.args]
            return np.logical_and.reduce([t for t, _ in parts]), np.logical_or.reduce([f for _, f in parts])
        if fn == "or":
            parts = [self.truths(a) for a in expr.args]
            return np.logical_or.reduce([t for t, _ in parts]), np.logical_and.reduce([f for _, f in parts])
        if fn == "not":
            t, f = self.truths(expr.args[0])
            return f, t
        if fn in ("is_null", "is_not_null"):
            _, nulls = self.values(expr.args[0])
            return (nulls, ~nulls) if fn == "is_null" else (~nulls, nulls)
        if fn in ("=", "!=", "<", "<=", ">", ">=") and len(expr.args) == 2:
            (a, na), (b, nb) = self.pair(expr.args[0], expr.args[1])
            result = _compare(fn, a, b)
            known = ~(na | nb)
            return result & known, ~result & known
        if fn == "between":
            lower = Call(">=", (expr.args[0], expr.args[1]))
            upper = Call("<=", (expr.args[0], expr.args[2]))
            return self.truths(Call("and", (lower, upper)))
        if fn == "in":
            values, nulls = self.values(expr.args[0])
            hit = np.zeros(self.n, dtype=bool)
            list_has_null = False
            for item in expr.args[1:]:
                if not isinstance(item, Literal):
                    raise Unsupported("IN with a computed item")
                if item.value is None:
                    list_has_null = True
                    continue
                hit |= _compare("=", values, _coerce_literal(item.value, values))
            hit &= ~nulls
            miss = ~hit & ~nulls & (not list_has_null)
            return hit, miss
        if fn in ("like", "not_like", "ilike") and isinstance(expr.args[1], Literal):
            values, nulls = self.values(expr.args[0])
            pattern = expr.args[1].value
            if not isinstance(pattern, str):
                raise Unsupported("LIKE with a non-string pattern")
            regex = like_regex(pattern, ignore_case=fn == "ilike")
            matched = np.fromiter(
                (isinstance(v, str) and regex.match(v) is not None for v in values), dtype=bool, count=self.n
            )
            if fn == "not_like":
                matched = ~matched
            return matched & ~nulls, ~matched & ~nulls
        raise Unsupported(f"predicate {fn}")


def _parse(value: Any, convert: Callable[[Any], Any]) -> Any:
    try:
        return convert(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None


def _compare(fn: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        if fn == "=":
            out = a == b
        elif fn == "!=":
            out = a != b
        elif fn == "<":
            out = a < b
        elif fn == "<=":
            out = a <= b
        elif fn == ">":
            out = a > b
        else:
            out = a >= b
    except TypeError as exc:
        raise Unsupported(f"cannot compare {a.dtype} with {b.dtype}") from exc
    result = np.asarray(out)
    if result.dtype != bool:
        result = result.astype(bool)
    return result


class SampleSource:
    """Estimates from table samples; declines predicates it cannot evaluate or that span tables.

    With fewer than ``MIN_MATCHES`` matching rows the interval is too loose to
    trust alone: the ``fallback`` (statistics) answers when it can, otherwise
    the sample's own estimate stands, interval and all.
    """

    name = "sample"

    def __init__(self, samples: Mapping[str, Sample], fallback: SelectivitySource | None = None):
        self.samples = {name.lower(): sample for name, sample in samples.items()}
        self.fallback = fallback

    def estimate(self, predicate: Expr, columns: Mapping[int, ColumnInfo]) -> SelectivityEstimate | None:
        from costmodel.estimate import SelectivityEstimate
        from costmodel.expr import column_ids

        cids = column_ids(predicate)
        if not cids:
            return None
        infos = [info for cid in cids if (info := columns.get(cid)) is not None]
        if len(infos) != len(cids):
            return None
        tables = {info.table.lower() for info in infos}
        if len(tables) != 1:
            return None
        sample = self.samples.get(next(iter(tables)))
        if sample is None or sample.size == 0:
            return None
        names = {cid: columns[cid].column for cid in cids}
        try:
            true, _ = _Evaluator(sample, names).truths(predicate)
        except Unsupported:
            return None
        matches = int(np.count_nonzero(true))
        n = sample.size
        low, high = wilson_interval(matches, n)
        if matches < MIN_MATCHES and self.fallback is not None:
            other = self.fallback.estimate(predicate, columns)
            if other is not None:
                return other
            if isinstance(predicate, Call) and predicate.fn in ("and", "or"):
                # too few rows to judge the whole: decline, so the chain combines its parts' estimates
                # (each from the sample where it has matches, from statistics where not)
                return None
        return SelectivityEstimate(matches / n, low, high, self.name, n)
