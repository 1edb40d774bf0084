"""Through distinct and alias: neither changes which rows a predicate keeps.

    Filter: x.a > 1                 Alias: x
      Alias: x            ->          Filter: t.a > 1
        Scan: t                         Scan: t

Distinct removes duplicates; duplicates agree on every predicate. An alias
renames; the predicate is re-spelled with the inner names.
"""

from __future__ import annotations

from costmodel.expr import Expr, substitute
from costmodel.plan import Alias, Distinct, output_fields
from costmodel.rules import Crossing, Outcome


def push_through_distinct(predicate: Expr, node: Distinct) -> Outcome:
    return [Crossing(0, predicate)]


def push_through_alias(predicate: Expr, node: Alias) -> Outcome:
    inner = {f.cid: f.column() for f in output_fields(node.input)}
    return [Crossing(0, substitute(predicate, inner))]
