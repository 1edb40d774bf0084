"""Whether an expression can raise at run time: legality's question before moving a predicate below another
(evaluated on rows the other would have removed, it could fail where the query as written did not)."""

from __future__ import annotations

from costmodel.expr import Call, Column, Expr, Literal, any_call
from costmodel.expr_names import DIVISIONS, RAISING, STRING_TYPES


def _nonzero_literal(expr: Expr) -> bool:
    return (
        isinstance(expr, Literal)
        and isinstance(expr.value, (int, float))
        and not isinstance(expr.value, bool)
        and expr.value != 0
    )


def can_raise(expr: Expr) -> bool:
    """True when evaluating ``expr`` on a row another predicate would remove may fail.

    Division or modulo by anything but a non-zero literal, explicit error
    functions, and casts of strings to other types (Spark's ANSI mode raises on
    bad input). Arithmetic overflow is not counted; see docs/legality.md. A loop of its own, not ``walk``
    (as ``column_ids``): legality, inference and ordering ask it of every conjunct, some at every join.
    """
    return any_call(expr, _call_raises)


def _call_raises(node: Call) -> bool:
    """Whether the call itself (not its arguments) may fail (``can_raise``)."""
    if node.fn in DIVISIONS and not (len(node.args) == 2 and _nonzero_literal(node.args[1])):
        return True
    if node.fn in RAISING or node.may_fail or node.opaque:
        return True
    if node.fn == "cast" and node.args:
        source = node.args[0]
        target = (node.type or "").lower()
        if target in STRING_TYPES:
            return False
        if isinstance(source, Literal) and source.type != "string":
            return False
        if isinstance(source, Column) and source.type not in STRING_TYPES:
            return False
        if isinstance(source, Literal) and source.type == "string":
            try:
                float(source.value)
                return False
            except (TypeError, ValueError):
                return True
        return True  # a string column, or a computed value whose type we do not know
    return False
