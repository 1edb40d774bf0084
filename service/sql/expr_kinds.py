"""Which branch of ``plan_expr.ExprBuilder.expr`` a sqlglot node takes, by the node's type.

The branches test the node's class in this order; a node's kind is its first match, found once per type
(``common.TypeKinds``) instead of by a chain of isinstance tests per node. No sqlglot class derives from a
``BINARY`` operator, so deriving from one is being one (tests/sql/test_expr_kinds.py checks it).
"""

from __future__ import annotations

from typing import Final

from sqlglot import exp

from service.sql.common import TypeKinds

BINARY: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.Like: "like",
    exp.ILike: "ilike",
    exp.RegexpLike: "rlike",
    exp.IntDiv: "div",
}

K_OTHER: Final = 0
K_PAREN: Final = 1
K_COLUMN: Final = 2
K_LITERAL: Final = 3
K_BOOLEAN: Final = 4
K_NULL: Final = 5
K_NEG: Final = 6
K_CAST: Final = 7
K_ADD_SUB: Final = 8
K_INTERVAL: Final = 9
K_ESCAPE: Final = 10
K_CONNECTOR: Final = 11
K_DPIPE: Final = 12
K_CONCAT: Final = 13
K_BINARY_OP: Final = 14
K_NOT: Final = 15
K_IS: Final = 16
K_IN: Final = 17
K_BETWEEN: Final = 18
K_CASE: Final = 19
K_IF: Final = 20
K_EXTRACT: Final = 21
K_EXISTS: Final = 22
K_SUBQUERY: Final = 23
K_ANY_ALL: Final = 24
K_WINDOW: Final = 25
K_TS_OR_DS_TO_DATE: Final = 26
K_GROUPING: Final = 27
K_FUNC: Final = 28

EXPR_KIND: Final = TypeKinds(
    [
        ((exp.Paren,), K_PAREN),
        ((exp.Column,), K_COLUMN),
        ((exp.Literal,), K_LITERAL),
        ((exp.Boolean,), K_BOOLEAN),
        ((exp.Null,), K_NULL),
        ((exp.Neg,), K_NEG),
        ((exp.Cast, exp.TryCast), K_CAST),
        ((exp.Add, exp.Sub), K_ADD_SUB),  # folded when one side is an interval, else a binary operator
        ((exp.Interval,), K_INTERVAL),
        ((exp.Escape,), K_ESCAPE),
        ((exp.And, exp.Or), K_CONNECTOR),
        ((exp.DPipe,), K_DPIPE),
        ((exp.Concat,), K_CONCAT),
        (tuple(BINARY), K_BINARY_OP),
        ((exp.Not,), K_NOT),
        ((exp.Is,), K_IS),
        ((exp.In,), K_IN),
        ((exp.Between,), K_BETWEEN),
        ((exp.Case,), K_CASE),
        ((exp.If,), K_IF),
        ((exp.Extract,), K_EXTRACT),
        ((exp.Exists,), K_EXISTS),
        ((exp.Subquery,), K_SUBQUERY),
        ((exp.Any, exp.All), K_ANY_ALL),
        ((exp.Window,), K_WINDOW),
        ((exp.TsOrDsToDate,), K_TS_OR_DS_TO_DATE),  # without a format; with one, a function
        ((exp.Grouping, exp.GroupingId), K_GROUPING),
        ((exp.Func,), K_FUNC),
    ],
    default=K_OTHER,
)
