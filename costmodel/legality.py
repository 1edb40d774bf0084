"""Which positions a predicate may legally take: each operator kind's rule (``costmodel.rules``), dispatched.

``cross(predicate, node)`` asks the rule of ``node``'s kind. A predicate
holding a correlated subquery moves only through operators that keep column
names and identities (joins, sorts, distinct, filters): elsewhere the outer
references inside the subquery would need rewriting too, which we refuse
rather than risk.
"""

from __future__ import annotations

from costmodel.expr import Expr, Subquery, walk
from costmodel.kinds.registry import kind_of
from costmodel.plan import Node
from costmodel.reasons import Reason
from costmodel.rules import Blocked, Outcome


def has_correlated_subquery(predicate: Expr) -> bool:
    return any(isinstance(e, Subquery) and e.outer_refs for e in walk(predicate))


def cross(predicate: Expr, node: Node) -> Outcome:
    """Where ``predicate``, sitting on ``node``'s output, may go below ``node`` (its kind's rule)."""
    kind = kind_of(node)
    if kind.renames_columns and has_correlated_subquery(predicate):
        return Blocked(Reason.CORRELATED_SUBQUERY, "the predicate's subquery refers to columns this operator renames")
    return kind.push_through(predicate, node)
