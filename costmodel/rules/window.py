"""Through a window only for predicates on partition keys common to every function.

    Filter: dept = 'x'                               Window: rank() OVER (PARTITION BY dept ...)
      Window: rank() OVER (PARTITION BY dept)  ->      Filter: dept = 'x'

Removing whole partitions leaves the other partitions' results unchanged;
removing some rows of a partition changes rank(), sum() and the rest.
"""

from __future__ import annotations

from costmodel.expr import Column, Expr, column_ids
from costmodel.plan import Window
from costmodel.reasons import Reason
from costmodel.rules import Blocked, Crossing, Outcome


def common_partition_keys(node: Window) -> frozenset[int]:
    common: frozenset[int] | None = None
    for function in node.functions:
        keys = function.partition_by if function.partition_by is not None else node.partition_by
        cids = frozenset(k.cid for k in keys if isinstance(k, Column))
        common = cids if common is None else common & cids
    return common or frozenset()


def push_through_window(predicate: Expr, node: Window) -> Outcome:
    used = column_ids(predicate)
    outputs = {f.cid for f in node.functions}
    if used & outputs:
        return Blocked(Reason.REFERENCES_WINDOW_OUTPUT, "the predicate reads a window function's result")
    if not used:
        return Blocked(Reason.NO_COLUMNS, "a predicate with no columns is not on the partition keys")
    keys = common_partition_keys(node)
    if not used <= keys:
        return Blocked(Reason.NOT_ON_PARTITION_KEYS, "the predicate reads columns that are not common partition keys")
    return [Crossing(0, predicate)]
