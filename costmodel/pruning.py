"""Container pruning: prove from min/max/null-count statistics that a file or row group holds no match.

Following the PruningPredicate seed, a scan's predicate is rewritten into a
predicate over each container's statistics (``x_min``, ``x_max``,
``x_null_count``, ``x_row_count``)::

    x = 5          ->  x_null_count != x_row_count AND x_min <= 5 AND 5 <= x_max
    x < 5          ->  x_null_count != x_row_count AND x_min < 5
    x IS NULL      ->  x_null_count > 0
    x IS NOT NULL  ->  x_null_count != x_row_count
    CAST(x AS int) = 5 -> x_null_count != x_row_count AND CAST(x_min AS int) <= 5 AND 5 <= CAST(x_max AS int)

The statistics are substituted as literals (unknown ones as NULL) and the
result folded under three-valued logic: a container is pruned only when it
folds to FALSE; TRUE and NULL (unknown) keep it. Anything the rewrite cannot
model becomes TRUE, so it keeps the container.

Before that, literal guarantees: where a container lists its distinct values
(``values`` in its column statistics), ``x = 5`` or ``x IN (...)`` prunes a
container holding none of them, and ``x != 5`` / ``x NOT IN (...)`` one
holding only them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from costmodel.catalog import ColumnStats, Container
from costmodel.expr import FALSE, TRUE, Call, Column, Expr, Literal, and_, conjuncts, or_, substitute
from costmodel.fold import Truth, fold
from costmodel.render import to_sql

#: Expression forms f(x) that keep order: f(x_min) <= f(x) <= f(x_max).
_INCREASING: Final = ("+", "-", "*", "/")
_NUMERIC: Final = {"int", "bigint", "smallint", "tinyint", "double", "float", "decimal", "long", "integer", "real"}
_TEMPORAL: Final = {"date", "timestamp"}


def _base_type(name: str | None) -> str:
    return (name or "unknown").split("(")[0].lower()


def _order_preserving_cast(expr: Call) -> bool:
    """Numbers to numbers and dates to timestamps keep order; strings do not ('10' < '9')."""
    target = _base_type(expr.type)
    source = expr.args[0]
    source_type = _base_type(source.type) if isinstance(source, (Column, Literal)) else "unknown"
    if isinstance(source, Call) and source.fn in _INCREASING:
        source_type = "double"  # arithmetic is numeric
    return (source_type in _NUMERIC and target in _NUMERIC) or (source_type in _TEMPORAL and target in _TEMPORAL)


@dataclass(frozen=True, slots=True)
class StatColumn:
    """Which statistic of which column a rewritten predicate's column stands for."""

    column: str
    stat: str
    temporal: bool = False


class _Rewriter:
    def __init__(self, names: Mapping[int, str]):
        self.names = names  # cid -> column name in the container statistics
        self.stats: dict[int, StatColumn] = {}
        self._ids: dict[tuple[str, str], int] = {}

    def stat(self, column: Column, stat: str) -> Column:
        name = self.names.get(column.cid, column.name.rpartition(".")[2])
        key = (name, stat)
        if key not in self._ids:
            cid = -(len(self._ids) + 1)
            self._ids[key] = cid
            self.stats[cid] = StatColumn(name, stat, _base_type(column.type) in _TEMPORAL)
        return Column(f"{column.name}_{stat}", self._ids[key], column.type)

    def some_not_null(self, column: Column) -> Expr:
        return Call("!=", (self.stat(column, "null_count"), self.stat(column, "row_count")))

    # ------------------------------------------------------------ monotone forms

    def monotone(self, expr: Expr) -> tuple[Column, Expr, Expr] | None:
        """For an expression increasing in one column x: (x, f(x_min), f(x_max))."""
        if isinstance(expr, Column):
            return expr, self.stat(expr, "min"), self.stat(expr, "max")
        if not isinstance(expr, Call):
            return None
        if expr.fn == "cast" and _order_preserving_cast(expr):
            inner = self.monotone(expr.args[0])
            if inner is None:
                return None
            x, lo, hi = inner
            return x, Call("cast", (lo,), type=expr.type), Call("cast", (hi,), type=expr.type)
        if expr.fn in _INCREASING and len(expr.args) == 2:
            a, b = expr.args
            if isinstance(b, Literal) and isinstance(b.value, (int, float)) and not isinstance(b.value, bool):
                if expr.fn in ("*", "/") and b.value <= 0:
                    return None
                inner = self.monotone(a)
                if inner is None:
                    return None
                x, lo, hi = inner
                return x, Call(expr.fn, (lo, b)), Call(expr.fn, (hi, b))
            if (
                isinstance(a, Literal)
                and isinstance(a.value, (int, float))
                and not isinstance(a.value, bool)
                and expr.fn in ("+", "*")
                and not (expr.fn == "*" and a.value <= 0)
            ):
                return self.monotone(Call(expr.fn, (b, a)))
        return None

    # ------------------------------------------------------------ predicates

    def rewrite(self, expr: Expr) -> Expr:
        """The predicate over statistics; TRUE where the rewrite cannot prove anything."""
        if isinstance(expr, Literal):
            return expr if isinstance(expr.value, bool) or expr.value is None else TRUE
        if not isinstance(expr, Call):
            return TRUE
        fn = expr.fn
        if fn == "and":
            return and_([self.rewrite(a) for a in expr.args])
        if fn == "or":
            parts = [self.rewrite(a) for a in expr.args]
            return TRUE if any(p is TRUE for p in parts) else or_(parts)
        if fn == "not":
            return self.rewrite_not(expr.args[0])
        if fn in ("is_null", "is_not_null") and isinstance(expr.args[0], Column):
            column = expr.args[0]
            if fn == "is_null":
                return Call(">", (self.stat(column, "null_count"), Literal(0, "int")))
            return self.some_not_null(column)
        if fn in ("=", "!=", "<", "<=", ">", ">=") and len(expr.args) == 2:
            # the literal on the right
            flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
            first, second = expr.args
            swapped = isinstance(first, Literal) and not isinstance(second, Literal)
            left, right = (second, first) if swapped else (first, second)
            fn = flip[fn] if swapped else fn
            if not isinstance(right, Literal):
                return TRUE
            form = self.monotone(left)
            if form is None:
                return TRUE
            x, lo, hi = form
            v = right
            if v.value is None:
                return FALSE  # x op NULL is never true
            checks = {
                "=": [Call("<=", (lo, v)), Call("<=", (v, hi))],
                "<": [Call("<", (lo, v))],
                "<=": [Call("<=", (lo, v))],
                ">": [Call(">", (hi, v))],
                ">=": [Call(">=", (hi, v))],
                "!=": [Call("not", (Call("and", (Call("=", (lo, v)), Call("=", (hi, v)))),))],
            }[fn]
            return and_([self.some_not_null(x), *checks])
        if fn == "between" and all(isinstance(a, Literal) for a in expr.args[1:]):
            return self.rewrite(
                Call("and", (Call(">=", (expr.args[0], expr.args[1])), Call("<=", (expr.args[0], expr.args[2]))))
            )
        if fn == "in" and all(isinstance(a, Literal) for a in expr.args[1:]):
            parts = [
                self.rewrite(Call("=", (expr.args[0], v)))
                for v in expr.args[1:]
                if isinstance(v, Literal) and v.value is not None
            ]
            return or_(parts) if parts else FALSE
        return TRUE

    def rewrite_not(self, inner: Expr) -> Expr:
        """NOT pushed inward, honouring NULL: NOT (x < 5) holds exactly where x >= 5."""
        if isinstance(inner, Call):
            negate = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "!=", "!=": "="}
            if inner.fn in negate and len(inner.args) == 2:
                return self.rewrite(Call(negate[inner.fn], inner.args))
            if inner.fn == "is_null":
                return self.rewrite(Call("is_not_null", inner.args))
            if inner.fn == "is_not_null":
                return self.rewrite(Call("is_null", inner.args))
            if inner.fn == "not":
                return self.rewrite(inner.args[0])
            if inner.fn == "and":
                return self.rewrite(Call("or", tuple(Call("not", (a,)) for a in inner.args)))
            if inner.fn == "or":
                return self.rewrite(Call("and", tuple(Call("not", (a,)) for a in inner.args)))
            if inner.fn == "between":
                x, lo, hi = inner.args
                return self.rewrite(Call("or", (Call("<", (x, lo)), Call(">", (x, hi)))))
            if inner.fn == "in" and all(isinstance(a, Literal) for a in inner.args[1:]):
                x, items = inner.args[0], inner.args[1:]
                if any(isinstance(a, Literal) and a.value is None for a in items):
                    return FALSE  # x NOT IN (..., NULL) is never true
                return self.rewrite(Call("and", tuple(Call("!=", (x, v)) for v in items)))
        return TRUE


def _cast_literal(value: Any, target: str) -> Any:
    base = target.split("(")[0]
    try:
        if base in ("int", "bigint", "smallint", "tinyint"):
            return int(float(value)) if isinstance(value, str) else int(value)
        if base in ("double", "float", "decimal"):
            return float(value)
        if base == "timestamp" and isinstance(value, str):
            return _comparable(value, temporal=True)
        if base == "date" and isinstance(value, str):
            day = _comparable(value, temporal=True)
            return day[:10] + " 00:00:00.000000" if day else None
    except (TypeError, ValueError):
        return None
    return None


def _evaluate(expr: Expr) -> Expr:
    """Fold the arithmetic and casts over literal statistics, so ``fold`` can compare them."""

    def step(node: Expr) -> Expr | None:
        if not isinstance(node, Call) or not all(isinstance(a, Literal) for a in node.args):
            return None
        args = [a.value for a in node.args if isinstance(a, Literal)]
        if any(v is None for v in args) and node.fn in ("cast", "+", "-", "*", "/"):
            return Literal(None, "null")
        if node.fn == "cast":
            return Literal(_cast_literal(args[0], node.type or ""), node.type or "unknown")
        if node.fn in ("+", "-", "*", "/") and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in args
        ):
            a, b = args
            if node.fn == "/" and b == 0:
                return Literal(None, "null")
            value = a + b if node.fn == "+" else a - b if node.fn == "-" else a * b if node.fn == "*" else a / b
            return Literal(value, "double")
        return None

    from costmodel.expr import transform

    return transform(expr, step)


def _comparable(value: Any, temporal: bool = False) -> Any:
    """Dates and timestamps as one fixed-width string, so that order is time order across both.

    ``1995-01-01`` (a date) and ``1995-01-01 00:00:00`` (a timestamp) are the same instant but
    compare unequal as text, and ``T`` sorts after a space: both become
    ``1995-01-01 00:00:00.000000``. Strings are converted when ``temporal`` says the column is one.
    """
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if isinstance(value, dt.date):
        return value.strftime("%Y-%m-%d 00:00:00.000000")
    if temporal and isinstance(value, str):
        try:
            return _comparable(dt.datetime.fromisoformat(value.strip()))
        except ValueError:
            return None  # an unreadable bound proves nothing
    return value


def _temporal_literals(expr: Expr) -> Expr:
    """Date and timestamp literals (and string literals compared with such columns) in canonical form."""
    from costmodel.expr import transform

    def step(node: Expr) -> Expr | None:
        if isinstance(node, Literal) and isinstance(node.value, str) and node.type in _TEMPORAL:
            return Literal(_comparable(node.value, temporal=True), node.type)
        if isinstance(node, Call) and node.fn in ("=", "!=", "<", "<=", ">", ">=", "in", "between"):
            temporal = any(_base_type(a.type) in _TEMPORAL for a in node.args if isinstance(a, (Column, Literal)))
            if temporal:
                args = tuple(
                    Literal(_comparable(a.value, temporal=True), "timestamp")
                    if isinstance(a, Literal) and isinstance(a.value, str)
                    else a
                    for a in node.args
                )
                return Call(node.fn, args, node.distinct, node.type, node.name, node.cost, node.deterministic)
        return None

    return transform(expr, step)


@dataclass(frozen=True, slots=True)
class PruningResult:
    predicate: Expr  # over the statistics
    kept: tuple[str, ...]
    pruned: tuple[str, ...]
    reasons: dict[str, str]

    def describe(self) -> str:
        return to_sql(self.predicate)


def _guarantee_prunes(expr: Expr, names: Mapping[int, str], container: Container) -> str | None:
    """A literal guarantee the container's value set breaks, or None."""
    for part in conjuncts(expr):
        negated = isinstance(part, Call) and part.fn == "not"
        inner = part.args[0] if negated and isinstance(part, Call) else part
        if not isinstance(inner, Call) or not inner.args or not isinstance(inner.args[0], Column):
            continue
        column = inner.args[0]
        if inner.fn == "=" and len(inner.args) == 2 and isinstance(inner.args[1], Literal):
            wanted = [inner.args[1].value]
            is_not = inner.fn == "=" and negated
        elif inner.fn == "!=" and len(inner.args) == 2 and isinstance(inner.args[1], Literal):
            wanted = [inner.args[1].value]
            is_not = not negated
        elif inner.fn == "in" and all(isinstance(a, Literal) for a in inner.args[1:]):
            wanted = [a.value for a in inner.args[1:] if isinstance(a, Literal)]
            is_not = negated
        else:
            continue
        stats = container.column_stats.get(names.get(column.cid, ""))
        if stats is None or stats.values is None:
            continue
        temporal = _base_type(column.type) in _TEMPORAL
        present = {_comparable(v, temporal) for v in stats.values}
        values = {_comparable(v, temporal) for v in wanted if v is not None}
        if not is_not and not present & values:
            return f"{column.name} holds none of {sorted(values, key=repr)}"
        if is_not and present <= values and None not in wanted:
            return f"{column.name} holds only {sorted(present, key=repr)}"
        if is_not and None in wanted:
            return f"{column.name} NOT IN a list with NULL is never true"
    return None


def prune(predicates: list[Expr], containers: tuple[Container, ...], names: Mapping[int, str]) -> PruningResult:
    """Which containers may hold a row where every predicate is true; ``names`` maps cid to column name."""
    rewriter = _Rewriter(names)
    predicates = [_temporal_literals(p) for p in predicates]
    rewritten = rewriter.rewrite(and_(predicates)) if predicates else TRUE
    kept: list[str] = []
    pruned: list[str] = []
    reasons: dict[str, str] = {}
    whole = and_(predicates) if predicates else TRUE
    for container in containers:
        reason = _guarantee_prunes(whole, names, container)
        if reason is None and rewritten is not TRUE:
            values = {}
            for cid, stat in rewriter.stats.items():
                values[cid] = Literal(_stat_value(container, stat), "unknown")
            truth = fold(_evaluate(substitute(rewritten, values)))
            if truth in (Truth.FALSE,):
                reason = "statistics prove no row matches"
        if reason is None:
            kept.append(container.id)
        else:
            pruned.append(container.id)
            reasons[container.id] = reason
    return PruningResult(rewritten, tuple(kept), tuple(pruned), reasons)


def _stat_value(container: Container, stat: StatColumn) -> Any:
    stats: ColumnStats | None = container.column_stats.get(stat.column)
    if stat.stat == "row_count":
        return container.row_count
    if stats is None:
        return None
    return _comparable(getattr(stats, stat.stat), stat.temporal)
