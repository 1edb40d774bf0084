"""Through a projection, substituting aliases and computed columns.

    Filter: c > 2                      Project: a, b, a + b AS c
      Project: a, b, a + b AS c   ->     Filter: a + b > 2
        Scan: t                            Scan: t

Never through a non-deterministic projected column (``rand() AS r`` then
``r < 0.5``: evaluating rand() twice gives other numbers).
"""

from __future__ import annotations

from costmodel.expr import (
    Column,
    Expr,
    column_ids,
    has_aggregate_or_window,
    is_deterministic,
    substitute,
)
from costmodel.functions import opaque_detail, opaque_names
from costmodel.plan import Project
from costmodel.reasons import Reason
from costmodel.rules import Blocked, Crossing, Outcome


def push_through_project(predicate: Expr, node: Project) -> Outcome:
    mapping = {}
    used = column_ids(predicate)
    for named in node.exprs:
        if named.cid not in used:
            continue
        expr = named.expr
        if isinstance(expr, Column) and expr.cid == named.cid:
            continue
        if opaque_names(expr):
            return Blocked(Reason.UNKNOWN_FUNCTION, f"{named.name} is computed by {opaque_detail(expr)}")
        if not is_deterministic(expr):
            return Blocked(
                Reason.NONDETERMINISTIC_PROJECTION, f"{named.name} is computed by a non-deterministic expression"
            )
        if has_aggregate_or_window(expr):
            return Blocked(Reason.COMPUTED_BY_AGGREGATE, f"{named.name} is computed by an aggregate or window call")
        mapping[named.cid] = expr
    return [Crossing(0, substitute(predicate, mapping) if mapping else predicate)]
