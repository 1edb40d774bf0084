"""Never through a limit or offset: which rows survive depends on what reaches the limit.

Filter: a > 1                 (unchanged)
  Limit: 10
"""

from __future__ import annotations

from costmodel.expr import Expr
from costmodel.plan import Limit
from costmodel.reasons import Reason
from costmodel.rules import Blocked, Outcome


def push_through_limit(predicate: Expr, node: Limit) -> Outcome:
    if node.count is None:
        return Blocked(Reason.OFFSET, f"the offset skips the first {node.offset} rows")
    return Blocked(Reason.LIMIT, f"the limit keeps only {node.count} rows")
