"""Which positions a predicate may legally take: the rules of ``costmodel.rules``, dispatched.

``cross(predicate, node)`` asks the rule of ``node``'s operator. A predicate
holding a correlated subquery moves only through operators that keep column
names and identities (joins, sorts, distinct, filters): elsewhere the outer
references inside the subquery would need rewriting too, which we refuse
rather than risk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from costmodel.expr import Expr, Subquery, walk
from costmodel.plan import Aggregate, Alias, Distinct, Filter, Join, Limit, Node, Project, Scan, SetOp, Sort, Window
from costmodel.rules import Blocked, Outcome
from costmodel.rules.aggregate import push_through_aggregate
from costmodel.rules.filter import push_through_filter
from costmodel.rules.join import push_through_join
from costmodel.rules.limit import push_through_limit
from costmodel.rules.passthrough import push_through_alias, push_through_distinct
from costmodel.rules.project import push_through_project
from costmodel.rules.scan import push_into_scan
from costmodel.rules.setop import push_through_setop
from costmodel.rules.sort import push_through_sort
from costmodel.rules.window import push_through_window


def has_correlated_subquery(predicate: Expr) -> bool:
    return any(isinstance(e, Subquery) and e.outer_refs for e in walk(predicate))


#: The rule for each operator: where a predicate on its output may go instead.
RULES: dict[type, Callable[[Expr, Any], Outcome]] = {
    Scan: push_into_scan,
    Project: push_through_project,
    Filter: push_through_filter,
    Sort: push_through_sort,
    Limit: push_through_limit,
    Window: push_through_window,
    Aggregate: push_through_aggregate,
    SetOp: push_through_setop,
    Distinct: push_through_distinct,
    Alias: push_through_alias,
    Join: push_through_join,
}


def cross(predicate: Expr, node: Node) -> Outcome:
    """Where ``predicate``, sitting on ``node``'s output, may go below ``node``."""
    if has_correlated_subquery(predicate) and isinstance(node, (Project, Aggregate, Window, Alias, SetOp)):
        return Blocked("correlated_subquery", "the predicate's subquery refers to columns this operator renames")
    return RULES[type(node)](predicate, node)
