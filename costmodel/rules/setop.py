"""Into every branch of a union, intersect or except, columns remapped by position.

    Filter: x > 1                    Union
      Union                   ->       Filter: a > 1
        Scan: t (a, b)                   Scan: t (a, b)
        Scan: u (b, a)                 Filter: b > 1
                                         Scan: u (b, a)

A row is in ``A EXCEPT B`` and passes P iff it is in A and passes P and is not
in B-rows-passing-P (equal rows give P the same answer), so pushing into both
sides of except is sound; likewise intersect and union.
"""

from __future__ import annotations

from costmodel.expr import Expr, substitute
from costmodel.plan import SetOp, output_fields
from costmodel.rules import Crossing, Outcome


def push_through_setop(predicate: Expr, node: SetOp) -> Outcome:
    crossings = []
    for i, branch in enumerate(node.inputs):
        branch_fields = output_fields(branch)
        mapping = {f.cid: branch_fields[pos].column() for pos, f in enumerate(node.fields)}
        crossings.append(Crossing(i, substitute(predicate, mapping)))
    return crossings
