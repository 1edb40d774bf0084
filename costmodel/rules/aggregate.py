"""Through an aggregate only for predicates on group keys (HAVING on a key).

    Filter: major = 'CS'                      Aggregate: group by major
      Aggregate: group by major     ->          Filter: major = 'CS'

Never below a global aggregate (no keys: it emits one row even for no input),
never a predicate that reads an aggregate's result, never one with no columns.
With grouping sets (ROLLUP, CUBE), only a predicate on keys every set groups by,
and never when a set is empty (the grand total row exists even for no input).
"""

from __future__ import annotations

from costmodel.expr import Column, Expr, column_ids, substitute
from costmodel.plan import Aggregate
from costmodel.reasons import Reason
from costmodel.rules import Blocked, Crossing, Outcome


def push_through_aggregate(predicate: Expr, node: Aggregate) -> Outcome:
    if not node.group_by:
        return Blocked(Reason.GLOBAL_AGGREGATE, "an aggregate without group keys emits a row even for empty input")
    used = column_ids(predicate)
    if not used:
        return Blocked(Reason.NO_COLUMNS, "a predicate with no columns is not on the group keys")
    keys = {k.cid: k for k in node.group_by}
    if not used <= set(keys):
        return Blocked(Reason.NOT_ON_GROUP_KEYS, "the predicate reads an aggregate result or a non-key column")
    if node.grouping_sets is not None:
        if () in node.grouping_sets:
            return Blocked(Reason.GRAND_TOTAL, "a grouping set without keys emits a total row even for empty input")
        if not used <= node.keys_in_every_set():
            # Rows of a set without that key carry NULL there: filtering below would change their totals.
            return Blocked(Reason.NOT_IN_EVERY_GROUPING_SET, "the predicate reads a key some grouping sets leave NULL")
    mapping = {
        cid: key.expr
        for cid, key in keys.items()
        if cid in used and not (isinstance(key.expr, Column) and key.expr.cid == cid)
    }
    return [Crossing(0, substitute(predicate, mapping) if mapping else predicate)]
