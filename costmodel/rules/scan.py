"""Into a scan's ``filters``: the last step down, where pruning and indexes can use it.

    Filter: a > 1                Scan: t filters=[a > 1]
      Scan: t            ->

Never a predicate that can raise into a scan that already filters (the
scan's filters may be what guards it).
"""

from __future__ import annotations

from costmodel.expr import Expr
from costmodel.expr_raise import can_raise
from costmodel.plan import Scan
from costmodel.reasons import Reason
from costmodel.rules import Blocked, Crossing, Outcome


def push_into_scan(predicate: Expr, node: Scan) -> Outcome:
    if node.filters and can_raise(predicate):
        return Blocked(Reason.CAN_RAISE_GUARD, "the predicate can raise and the scan's filters may guard it")
    return [Crossing(0, predicate)]
