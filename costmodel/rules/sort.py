"""Through a sort: filtering commutes with ordering, unless the sort carries a limit.

    Filter: a > 1            Sort: a
      Sort: a          ->      Filter: a > 1

A sort with a limit is a top-N: the first N rows of the filtered input are
not the filtered first N rows, so the predicate stays above.
"""

from __future__ import annotations

from costmodel.expr import Expr
from costmodel.plan import Sort
from costmodel.reasons import Reason
from costmodel.rules import Blocked, Crossing, Outcome


def push_through_sort(predicate: Expr, node: Sort) -> Outcome:
    if node.limit is not None:
        return Blocked(Reason.SORT_LIMIT, f"the sort keeps only its first {node.limit} rows")
    return [Crossing(0, predicate)]
