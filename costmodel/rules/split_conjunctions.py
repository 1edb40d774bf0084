"""Split a filter into conjuncts and decide which may move on their own.

    a > 1 AND rand() < 0.5 AND b = 2
      a > 1           movable
      rand() < 0.5    stays: non-deterministic
      b = 2           stays: after a non-deterministic conjunct (moving it
                      would change how often rand() is called and on which rows)

A filter that reads an aggregate (``vals > min(vals)``) keeps all its
conjuncts: the aggregate is over exactly the rows that reach the filter. A
conjunct that can raise stays when an earlier conjunct may be its guard
(``b != 0 AND a / b > 1``). Constant conjuncts fold: TRUE disappears, and a
never-true one (``1 = 0``, ``a = NULL``) becomes FALSE: an empty result.
"""

from __future__ import annotations

from costmodel.expr import (
    FALSE,
    Column,
    Expr,
    and_,
    conjuncts,
    disjuncts,
    has_aggregate_or_window,
    is_deterministic,
    or_,
    transform,
)
from costmodel.expr_raise import can_raise
from costmodel.fold import Truth, constant_truth
from costmodel.functions import opaque_names
from costmodel.reasons import Reason


def fold_conjunct(part: Expr, movable: bool = False) -> Expr | None:
    """``None`` for an always-true conjunct, FALSE for a never-true one, else the conjunct. ``movable``: one
    ``classify_conjuncts`` let move, so deterministic and free of aggregates already (a walk each, into subqueries'
    plans too, not made again)."""
    if (not movable and (has_aggregate_or_window(part) or not is_deterministic(part))) or can_raise(part):
        return part
    truth = constant_truth(part)
    if truth is Truth.TRUE:
        return None
    if truth is Truth.FALSE:
        return FALSE
    return part


def _shape(expr: Expr) -> Expr:
    """``expr`` with column spellings erased: two references to one column compare equal."""
    return transform(expr, lambda node: Column("", node.cid) if isinstance(node, Column) else None)


def factor_common_conjuncts(predicate: Expr) -> list[Expr]:
    """``(a AND b) OR (a AND c)`` as ``[a, b OR c]``: a conjunct every branch of an OR shares stands alone.

    Distributivity holds in SQL's three-valued logic as in two-valued logic, so the rows kept are the
    same; the shared conjunct can then move on its own (TPC-H Q19's ``p_partkey = l_partkey`` becomes
    a join key).
    """
    branches = disjuncts(predicate)
    if len(branches) < 2:
        return [predicate]
    parts = [conjuncts(branch) for branch in branches]
    # each conjunct shaped once (comparing them pairwise was quadratic), and only until a branch shares nothing
    # with the ones before it: a wide OR of single comparisons stops at its second branch
    shapes = [[_shape(c) for c in parts[0]]]
    keys = set(shapes[0])
    for branch in parts[1:]:
        if not keys:
            return [predicate]
        shapes.append([_shape(c) for c in branch])
        keys &= set(shapes[-1])
    if not keys or not is_deterministic(predicate) or can_raise(predicate):
        return [predicate]
    common = [c for c, s in zip(parts[0], shapes[0], strict=True) if s in keys]
    rest = [
        [c for c, s in zip(branch, kinds, strict=True) if s not in keys]
        for branch, kinds in zip(parts, shapes, strict=True)
    ]
    if any(not branch for branch in rest):
        return common  # one branch is exactly the common part: the OR adds nothing
    return [*common, or_([and_(branch) for branch in rest])]


def classify_conjuncts(predicate: Expr) -> list[tuple[Expr, Reason | None]]:
    """Each conjunct with ``None`` when it may move alone, else the reason it stays."""
    parts = [factored for part in conjuncts(predicate) for factored in factor_common_conjuncts(part)]
    if any(has_aggregate_or_window(p) for p in parts):
        return [(p, Reason.AGGREGATE_IN_PREDICATE) for p in parts]
    out: list[tuple[Expr, Reason | None]] = []
    after_nondeterministic = False
    for i, part in enumerate(parts):
        if not is_deterministic(part):
            out.append((part, Reason.UNKNOWN_FUNCTION if opaque_names(part) else Reason.NONDETERMINISTIC_PREDICATE))
            after_nondeterministic = True
        elif after_nondeterministic:
            out.append((part, Reason.AFTER_NONDETERMINISTIC_CONJUNCT))
        elif can_raise(part) and i > 0:
            out.append((part, Reason.GUARDED_BY_EARLIER_CONJUNCT))
        else:
            out.append((part, None))
    return out
