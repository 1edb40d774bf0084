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

from costmodel.expr import FALSE, Expr, can_raise, conjuncts, has_aggregate_or_window, is_deterministic
from costmodel.fold import Truth, constant_truth


def fold_conjunct(part: Expr) -> Expr | None:
    """``None`` for an always-true conjunct, FALSE for a never-true one, else the conjunct."""
    if has_aggregate_or_window(part) or not is_deterministic(part) or can_raise(part):
        return part
    truth = constant_truth(part)
    if truth is Truth.TRUE:
        return None
    if truth is Truth.FALSE:
        return FALSE
    return part


def classify_conjuncts(predicate: Expr) -> list[tuple[Expr, str | None]]:
    """Each conjunct with ``None`` when it may move alone, else the reason it stays."""
    parts = conjuncts(predicate)
    if any(has_aggregate_or_window(p) for p in parts):
        return [(p, "aggregate_in_predicate") for p in parts]
    out: list[tuple[Expr, str | None]] = []
    after_nondeterministic = False
    for i, part in enumerate(parts):
        if not is_deterministic(part):
            out.append((part, "nondeterministic_predicate"))
            after_nondeterministic = True
        elif after_nondeterministic:
            out.append((part, "after_nondeterministic_conjunct"))
        elif can_raise(part) and i > 0:
            out.append((part, "guarded_by_earlier_conjunct"))
        else:
            out.append((part, None))
    return out
