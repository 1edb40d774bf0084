"""Three-valued folding: the proofs behind outer-join simplification and empty results."""

import pytest

from costmodel.expr import NULL, Call, Column, Literal
from costmodel.fold import Truth, constant_truth, fold, rejects_nulls

X, Y = Column("x", 1), Column("y", 2)


def call(fn, *args, **kw):
    return Call(fn, tuple(args), **kw)


def lit(v):
    return Literal(v)


@pytest.mark.parametrize(
    "expr, expected",
    [
        (call("=", lit(1), NULL), Truth.NULL),
        (call("=", NULL, NULL), Truth.NULL),
        (call("and", NULL, lit(True)), Truth.NULL),
        (call("and", NULL, lit(False)), Truth.FALSE),
        (call("or", NULL, lit(True)), Truth.TRUE),
        (call("or", NULL, lit(False)), Truth.NULL),
        (call("not", NULL), Truth.NULL),
        (call("in", lit(1), lit(2), NULL), Truth.NULL),
        (call("in", lit(1), lit(1), NULL), Truth.TRUE),
        (call("between", lit(5), lit(1), lit(9)), Truth.TRUE),
        (call("<=>", NULL, NULL), Truth.TRUE),
        (call("is_null", NULL), Truth.TRUE),
        (call("=", call("+", lit(1), lit(2)), lit(3)), Truth.TRUE),
    ],
)
def test_sql_truth_tables(expr, expected):
    assert fold(expr) is expected


def test_columns_are_unknown_unless_set_to_null():
    assert fold(call(">", X, lit(5))) is Truth.UNKNOWN
    assert fold(call(">", X, lit(5)), {1}) is Truth.NULL


@pytest.mark.parametrize(
    "expr, rejects",
    [
        (call(">", X, lit(5)), True),
        (call("like", X, lit("A%")), True),
        (call("is_not_null", X), True),
        (call("=", X, Y), True),
        (call("and", call(">", X, lit(5)), call(">", Y, lit(1))), True),
        (call("=", call("coalesce", X, lit(0)), lit(0)), False),
        (call("is_null", X), False),
        (call("is_not_true", call(">", X, lit(5))), False),
        (call("or", call(">", X, lit(5)), call(">", Y, lit(1))), False),
        (call("=", Call("udf", (X,), name="f"), lit(1)), False),
        (call("=", call("case", call("is_null", X), lit(1), lit(0)), lit(1)), False),
        (call("=", call("case", call("is_null", X), lit(0), lit(1)), lit(1)), True),
    ],
)
def test_null_rejection(expr, rejects):
    assert rejects_nulls(expr, {1}) is rejects


def test_constant_truth():
    assert constant_truth(call("=", lit(1), lit(0))) is Truth.FALSE
    assert constant_truth(call("=", X, NULL)) is Truth.FALSE
    assert constant_truth(call("in", X, NULL)) is Truth.FALSE
    assert constant_truth(call("=", lit("a"), lit("a"))) is Truth.TRUE
    assert constant_truth(call(">", X, lit(1))) is Truth.UNKNOWN
    # division is never folded: it may raise
    assert constant_truth(call("=", call("/", lit(1), lit(0)), lit(1))) is Truth.UNKNOWN
