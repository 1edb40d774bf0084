"""Bounds on one column: ``x >= lo AND x <= hi`` keeps the rows between ``lo`` and ``hi``, not (the rows above
``lo``) x (the rows below ``hi``).

The estimator multiplies the parts of a conjunction (independence), which is wrong for two bounds of one column:
over orders' six and a half years, ``o_orderdate >= '1995-03-01'`` keeps about half of the rows and
``o_orderdate <= '1995-03-03'`` about half, so the product says a quarter where the interval keeps 0.1%.
``BETWEEN`` is estimated as an interval already; this module finds the same interval written as comparisons
(what PySpark's ``Column.between`` builds, what TPC-H's ``d >= x AND d < y`` says), as PostgreSQL's
``clauselist_selectivity`` pairs the range clauses on one variable. ``ColumnStatsSource`` answers a group as one
interval; ``Estimator`` and ``CostModel.apply`` hand it the groups.

    >>> from costmodel.expr import Call, Column, Literal
    >>> d = Column("d", 7)
    >>> bound_of(Call(">=", (d, Literal("1995-03-01"))))
    Bound(cid=7, lower='1995-03-01', upper=None)
    >>> bound_groups([Call(">=", (d, Literal(1))), Call("=", (Column("e", 8), Literal(2))), Call("<", (d, Literal(5)))])
    [[0, 2]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from costmodel.expr import Call, Column, Expr, Literal

_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True, slots=True)
class Bound:
    """A predicate as bounds on one column (by its identity ``cid``): a lower bound, an upper bound or both."""

    cid: int
    lower: Any | None
    upper: Any | None


def _column(expr: Expr) -> Column | None:
    """``expr`` when it is a column, or the column a cast reads (as the statistics source looks through casts)."""
    if isinstance(expr, Call) and expr.fn == "cast" and len(expr.args) == 1:
        expr = expr.args[0]
    return expr if isinstance(expr, Column) else None


def bound_of(predicate: Expr) -> Bound | None:
    """``predicate`` as bounds: a comparison (``<``, ``<=``, ``>``, ``>=``) of a column with a non-null literal
    either way round, or a ``BETWEEN`` of a column and two non-null literals; None for anything else."""
    if not isinstance(predicate, Call):
        return None
    args = predicate.args
    if predicate.fn == "between" and len(args) == 3:
        column = _column(args[0])
        low, high = args[1], args[2]
        if column is None or not isinstance(low, Literal) or not isinstance(high, Literal):
            return None
        if low.value is None or high.value is None:
            return None
        return Bound(column.cid, low.value, high.value)
    if predicate.fn not in _FLIPPED or len(args) != 2:
        return None
    op = predicate.fn
    column, value = _column(args[0]), args[1]
    if column is None:
        column, value, op = _column(args[1]), args[0], _FLIPPED[op]
    if column is None or not isinstance(value, Literal) or value.value is None:
        return None
    return Bound(column.cid, value.value, None) if op in (">", ">=") else Bound(column.cid, None, value.value)


def bound_groups(predicates: Sequence[Expr]) -> list[list[int]]:
    """The positions of the predicates that bound one column, for each column two or more of them bound, in
    the order of their first member."""
    by_column: dict[int, list[int]] = {}
    for i, predicate in enumerate(predicates):
        bound = bound_of(predicate)
        if bound is not None:
            by_column.setdefault(bound.cid, []).append(i)
    return [group for group in by_column.values() if len(group) > 1]


def grouped_bounds(parts: Sequence[Expr]) -> tuple[Expr, ...] | None:
    """The parts of a conjunction with each group of bounds on one column made one ``AND`` (at its first
    member's place), to be estimated as one interval; None when there is no group, or when the only group is
    every part (the conjunction itself, which the sources were asked about already)."""
    groups = bound_groups(parts)
    if not groups or (len(groups) == 1 and len(groups[0]) == len(parts)):
        return None
    member_of = {i: group for group in groups for i in group}
    out: list[Expr] = []
    for i, part in enumerate(parts):
        group = member_of.get(i)
        if group is None:
            out.append(part)
        elif group[0] == i:
            out.append(Call("and", tuple(parts[j] for j in group)))
    return tuple(out)
