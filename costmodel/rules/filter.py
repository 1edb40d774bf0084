"""Past a filter that stays put (one holding an aggregate, window or non-deterministic call).

    Filter: vals > 1                        (unchanged: vals > 1 would change min(vals))
      Filter: vals > min(vals)

A predicate may pass below another filter only when both are deterministic,
the lower one reads no aggregate (its result depends on which rows reach it,
the Polars boundary), and the moving predicate cannot raise (the lower
filter may be what guards it, e.g. ``b != 0`` below ``a / b > 1``).
"""

from __future__ import annotations

from costmodel.expr import Expr, has_aggregate_or_window, is_deterministic
from costmodel.expr_raise import can_raise
from costmodel.functions import opaque_detail, opaque_names
from costmodel.plan import Filter
from costmodel.reasons import Reason
from costmodel.rules import Blocked, Crossing, Outcome


def push_through_filter(predicate: Expr, node: Filter) -> Outcome:
    if has_aggregate_or_window(node.predicate):
        return Blocked(Reason.FILTER_READS_AGGREGATE, "the filter below reads an aggregate over its input rows")
    if opaque_names(node.predicate):
        return Blocked(Reason.UNKNOWN_FUNCTION, f"the filter below calls {opaque_detail(node.predicate)}")
    if not is_deterministic(node.predicate):
        return Blocked(Reason.NONDETERMINISTIC_FILTER, "the filter below is non-deterministic")
    if can_raise(predicate):
        return Blocked(Reason.CAN_RAISE_GUARD, "the predicate can raise and the filter below may guard it")
    return [Crossing(0, predicate)]
