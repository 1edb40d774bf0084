"""Three-valued constant folding.

``fold(expr, null_cids)`` evaluates ``expr`` with the columns in ``null_cids``
set to NULL and every other column unknown, under SQL's three-valued logic.
It answers with a ``Truth``: TRUE, FALSE, NULL, NOT_TRUE (false or NULL, we do
not know which) or UNKNOWN. Two uses:

* an outer join's null-supplying side is *rejected* by a WHERE predicate when
  folding it with that side's columns NULL gives FALSE, NULL or NOT_TRUE::

      r.x > 5            -> NULL      (rejects: the join can become inner)
      coalesce(r.x, 0)=0 -> TRUE      (does not reject)
      r.x > 5 OR l.y = 1 -> UNKNOWN   (does not reject)

* a predicate with no unknown columns folds to a constant: ``1 = 0`` and
  ``a = NULL`` are never true, so the filter yields an empty result.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Set
from contextvars import ContextVar
from typing import Any, Final

from costmodel.expr import ARITHMETIC, COMPARISONS, LIKES, Call, Column, Expr, Literal, Subquery
from costmodel.trampoline import Done, Step, run


class Truth(enum.Enum):
    TRUE = "true"
    FALSE = "false"
    NULL = "null"
    NOT_TRUE = "not_true"  # false or null
    UNKNOWN = "unknown"

    @property
    def never_true(self) -> bool:
        return self in (Truth.FALSE, Truth.NULL, Truth.NOT_TRUE)


#: Functions that return NULL whenever an argument is NULL.
STRICT: Final = frozenset(
    COMPARISONS - {"<=>"}
    | ARITHMETIC
    | LIKES
    | {
        "rlike",
        "in",
        "between",
        "cast",
        "upper",
        "lower",
        "substring",
        "substr",
        "length",
        "trim",
        "ltrim",
        "rtrim",
        "abs",
        "year",
        "month",
        "day",
        "quarter",
        "extract",
        "date_add",
        "date_sub",
        "concat",
        "round",
        "floor",
        "ceil",
        "sqrt",
        "ln",
        "log",
        "exp",
        "power",
        "mod",
        "neg",
        "starts_with",
        "startswith",
        "ends_with",
        "contains",
        "regexp_like",
    }
)

_UNK: Final = object()  # a value we cannot know


_CALL: Final = object()  # not a leaf: a call, whose value ``_value`` works out


def _leaf_value(expr: Expr, nulls: Set[int]) -> Any:
    """``_value`` of a literal, a column or a subquery, read without a trampoline step; ``_CALL`` for a call."""
    if isinstance(expr, Literal):
        return expr.value
    if isinstance(expr, Column):
        return None if expr.cid in nulls else _UNK
    if isinstance(expr, Subquery):
        return _UNK
    return _CALL


def _value(expr: Expr, nulls: Set[int]) -> Step[Any]:
    """A constant value for ``expr``, ``None`` for NULL, or ``_UNK`` (trampolined: ``costmodel.trampoline``)."""
    value = _leaf_value(expr, nulls)
    if value is _CALL:
        assert isinstance(expr, Call)
        if expr.fn == "coalesce" or expr.fn in ("nvl", "ifnull"):
            value = None
            for arg in expr.args:  # the first operand not NULL, unless one before it is unknown
                value = yield _value(arg, nulls)
                if value is not None:
                    break
        elif expr.fn == "case":
            value = yield _case_value(expr, nulls)
        elif _is_boolean(expr):
            truth = yield _fold(expr, nulls)
            value = {Truth.TRUE: True, Truth.FALSE: False, Truth.NULL: None}.get(truth, _UNK)
        elif expr.fn in STRICT:
            values = yield _values(expr.args, nulls)
            if any(v is None for v in values):
                value = None
            else:
                value = _UNK if any(v is _UNK for v in values) else _arith(expr.fn, values)
        else:
            value = _UNK
    yield Done(value)


def _values(args: tuple[Expr, ...], nulls: Set[int]) -> Step[list[Any]]:
    out = []
    for arg in args:
        leaf = _leaf_value(arg, nulls)
        out.append(leaf if leaf is not _CALL else (yield _value(arg, nulls)))
    yield Done(out)


def _case_value(expr: Call, nulls: Set[int]) -> Step[Any]:
    args = expr.args
    value: Any = None
    for i in range(0, len(args) - 1, 2):
        cond = yield _fold(args[i], nulls)
        if cond is Truth.TRUE:
            value = yield _value(args[i + 1], nulls)
            break
        if cond is Truth.UNKNOWN:
            value = _UNK
            break
    else:
        if len(args) % 2:
            value = yield _value(args[-1], nulls)
    yield Done(value)


def _arith(fn: str, values: list[Any]) -> Any:
    try:
        if fn == "+":
            return values[0] + values[1]
        if fn == "-":
            return values[0] - values[1]
        if fn == "*":
            return values[0] * values[1]
        if fn == "neg":
            return -values[0]
    except TypeError:
        return _UNK
    return _UNK  # division and the rest are not folded: they may raise


def _is_boolean(expr: Call) -> bool:
    return expr.fn in COMPARISONS or expr.fn in (
        "and",
        "or",
        "not",
        "is_null",
        "is_not_null",
        "in",
        "between",
        "is_true",
        "is_false",
        "is_not_true",
        "is_not_false",
    )


def _compare(fn: str, left: Any, right: Any) -> Truth:
    if isinstance(left, bool) != isinstance(right, bool):
        return Truth.UNKNOWN
    numeric = (int, float)
    if not (
        (isinstance(left, numeric) and isinstance(right, numeric)) or (isinstance(left, str) and isinstance(right, str))
    ):
        return Truth.UNKNOWN
    return _true_if(_COMPARISONS[fn](left, right))


#: both sides numbers or both strings by the time these run
_COMPARISONS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "<=>": operator.eq,
}


def _and(parts: list[Truth]) -> Truth:
    if Truth.FALSE in parts:
        return Truth.FALSE
    if all(p is Truth.TRUE for p in parts):
        return Truth.TRUE
    if any(p in (Truth.NULL, Truth.NOT_TRUE) for p in parts):
        if all(p in (Truth.TRUE, Truth.NULL) for p in parts):
            return Truth.NULL
        return Truth.NOT_TRUE
    return Truth.UNKNOWN


def _or(parts: list[Truth]) -> Truth:
    if Truth.TRUE in parts:
        return Truth.TRUE
    if all(p is Truth.FALSE for p in parts):
        return Truth.FALSE
    if Truth.UNKNOWN in parts:
        return Truth.UNKNOWN
    if all(p in (Truth.FALSE, Truth.NULL) for p in parts):
        return Truth.NULL
    return Truth.NOT_TRUE


def _not(part: Truth) -> Truth:
    return {
        Truth.TRUE: Truth.FALSE,
        Truth.FALSE: Truth.TRUE,
        Truth.NULL: Truth.NULL,
    }.get(part, Truth.UNKNOWN)


def fold(expr: Expr, nulls: Set[int] = frozenset()) -> Truth:
    """The truth of predicate ``expr`` with columns ``nulls`` NULL and all others unknown."""
    remembered = _remembered(expr, nulls)  # no trampoline step for a truth ``_fold`` remembered
    return remembered if remembered is not None else run(_fold(expr, nulls))


def _folds(args: tuple[Expr, ...], nulls: Set[int]) -> Step[list[Truth]]:
    out = []
    for arg in args:
        out.append((yield _fold(arg, nulls)))
    yield Done(out)


#: Truths of expressions with no column NULL (``constant_truth``), by object, in this optimization
#: (``costmodel.plan.plan_memo``): the estimator asks at every level of a nested AND, OR or NOT (quadratic without it).
CONSTANT_TRUTHS: Final[ContextVar[dict[int, tuple[Expr, Truth]] | None]] = ContextVar("constant_truths", default=None)


def _remembered(expr: Expr, nulls: Set[int]) -> Truth | None:
    """The constant truth of call ``expr`` when this ``plan_memo`` has it (only calls with no NULL columns)."""
    memo = None if nulls else CONSTANT_TRUTHS.get()
    hit = memo.get(id(expr)) if memo is not None else None
    return hit[1] if hit is not None and hit[0] is expr else None


def _fold(expr: Expr, nulls: Set[int]) -> Step[Truth]:
    """``_fold_here``, remembered for constant truths (no NULL columns) inside a ``plan_memo``."""
    truth = _remembered(expr, nulls)
    if truth is None:
        truth = yield _fold_here(expr, nulls)
        memo = None if nulls else CONSTANT_TRUTHS.get()
        if memo is not None and isinstance(expr, Call):
            memo[id(expr)] = (expr, truth)
    yield Done(truth)


def _fold_here(expr: Expr, nulls: Set[int]) -> Step[Truth]:
    """One expression's truth, its operands' truths or values worked out first (the tables below)."""
    if isinstance(expr, Literal):
        truth = _value_truth(expr.value)
    elif isinstance(expr, Column):
        truth = Truth.NULL if expr.cid in nulls else Truth.UNKNOWN
    elif isinstance(expr, Subquery):
        # NULL IN (...) is NULL, or FALSE for an empty subquery
        truth = Truth.NOT_TRUE if expr.kind == "in" and (yield _value(expr.args[0], nulls)) is None else Truth.UNKNOWN
    elif expr.fn == "and":
        truth = _and((yield _folds(expr.args, nulls)))
    elif expr.fn == "or":
        truth = _or((yield _folds(expr.args, nulls)))
    elif expr.fn == "not":
        truth = _not((yield _fold(expr.args[0], nulls)))
    elif expr.fn in ("is_null", "is_not_null"):
        value = yield _value(expr.args[0], nulls)
        truth = Truth.UNKNOWN if value is _UNK else _true_if((value is None) == (expr.fn == "is_null"))
    elif expr.fn in ("is_true", "is_false", "is_not_true", "is_not_false"):
        truth = _truth_test(expr.fn, (yield _fold(expr.args[0], nulls)))
    elif expr.fn == "<=>":
        truth = _null_safe_equal(*(yield _values(expr.args, nulls)))
    elif expr.fn in COMPARISONS:
        truth = _comparison(expr.fn, *(yield _values(expr.args, nulls)))
    elif expr.fn == "in":
        needle = yield _value(expr.args[0], nulls)
        truth = Truth.NULL if needle is None else _in(needle, (yield _values(expr.args[1:], nulls)))
    elif expr.fn == "between":
        truth = _between(*(yield _values(expr.args, nulls)))
    else:
        truth = _value_truth((yield _value(expr, nulls)))
    yield Done(truth)


def _true_if(holds: bool) -> Truth:
    return Truth.TRUE if holds else Truth.FALSE


def _value_truth(value: Any) -> Truth:
    """The truth of a boolean expression's value (``_value``): NULL, TRUE, FALSE, or UNKNOWN for the rest."""
    if value is None:
        return Truth.NULL
    return _true_if(value) if isinstance(value, bool) else Truth.UNKNOWN


def _truth_test(fn: str, inner: Truth) -> Truth:
    """``x IS [NOT] TRUE|FALSE`` on ``x``'s truth: never NULL."""
    if inner is Truth.UNKNOWN:
        return Truth.UNKNOWN
    if inner is Truth.NOT_TRUE:
        return {"is_true": Truth.FALSE, "is_not_true": Truth.TRUE}.get(fn, Truth.UNKNOWN)
    hit = inner is (Truth.TRUE if fn in ("is_true", "is_not_true") else Truth.FALSE)
    return _true_if(hit != fn.startswith("is_not"))


def _null_safe_equal(left: Any, right: Any) -> Truth:
    """``left <=> right``: NULL equals NULL, never NULL itself."""
    if left is _UNK or right is _UNK:
        return Truth.UNKNOWN
    if left is None or right is None:
        return _true_if(left is None and right is None)
    return _compare("=", left, right)


def _comparison(fn: str, left: Any, right: Any) -> Truth:
    """``left fn right`` for a comparison other than ``<=>``: NULL when either side is."""
    if left is None or right is None:
        return Truth.NULL
    return Truth.UNKNOWN if left is _UNK or right is _UNK else _compare(fn, left, right)


def _in(needle: Any, values: list[Any]) -> Truth:
    """``needle IN (values)`` with ``needle`` not NULL."""
    if needle is _UNK:
        # x IN (NULL, NULL) can never be true
        return Truth.NOT_TRUE if all(v is None for v in values) else Truth.UNKNOWN
    return _or([Truth.NULL if v is None else Truth.UNKNOWN if v is _UNK else _compare("=", needle, v) for v in values])


def _between(x: Any, lo: Any, hi: Any) -> Truth:
    if x is None:
        return Truth.NULL
    ge = Truth.NULL if lo is None else Truth.UNKNOWN if _UNK in (x, lo) else _compare(">=", x, lo)
    le = Truth.NULL if hi is None else Truth.UNKNOWN if _UNK in (x, hi) else _compare("<=", x, hi)
    return _and([ge, le])


def rejects_nulls(expr: Expr, cids: Set[int]) -> bool:
    """True when ``expr`` can never be true on a row whose ``cids`` are all NULL."""
    return fold(expr, cids).never_true


def constant_truth(expr: Expr) -> Truth:
    """TRUE when ``expr`` holds on every row, FALSE when on none, else UNKNOWN."""
    truth = fold(expr, frozenset())
    if truth.never_true:
        return Truth.FALSE
    return truth
