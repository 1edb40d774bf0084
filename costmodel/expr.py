"""Expressions: immutable trees of columns, literals, calls and subqueries.

Columns carry a ``cid`` once bound (see ``costmodel.wire.read``): the identity of the
column they read, so self-joins and re-aliased names never get confused.
The helpers here answer the questions legality asks of a predicate: which columns it reads, whether it is
deterministic, whether it holds aggregate or window calls (whether it can raise: ``costmodel.expr_raise``;
what it costs per row: ``costmodel.cost.per_row_cost``); the function names they classify by are
``costmodel.expr_names``' (re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Protocol

from costmodel.expr_names import AGGREGATES as AGGREGATES
from costmodel.expr_names import ARITHMETIC as ARITHMETIC
from costmodel.expr_names import BOOLEAN as BOOLEAN
from costmodel.expr_names import COMPARISONS as COMPARISONS
from costmodel.expr_names import DIVISIONS as DIVISIONS
from costmodel.expr_names import LIKES as LIKES
from costmodel.expr_names import NONDETERMINISTIC as NONDETERMINISTIC
from costmodel.expr_names import RAISING as RAISING
from costmodel.expr_names import REGEXES as REGEXES
from costmodel.expr_names import STRING_TYPES as STRING_TYPES
from costmodel.expr_names import WINDOW_ONLY as WINDOW_ONLY
from costmodel.expr_names import like_regex as like_regex

if TYPE_CHECKING:  # for type checkers only: at run time expr imports nothing of plan (plan builds on expr)
    from costmodel.plan import Node


class PlanNode(Protocol):
    """What an expression needs of a subquery's plan: its id. ``costmodel.plan`` builds on this module,
    never the other way round; it lends ``walk`` its plan walker (``use_plan_walker``)."""

    @property
    def id(self) -> str: ...


#: Every expression of every node of a plan; set by ``costmodel.plan`` when it is imported.
_plan_expressions: Callable[[PlanNode], Iterator[Expr]] | None = None


def use_plan_walker(walker: Callable[[PlanNode], Iterator[Expr]]) -> None:
    """Let ``walk(..., into_subqueries=True)`` look inside subquery plans (``costmodel.plan`` calls this)."""
    global _plan_expressions
    _plan_expressions = walker


@dataclass(frozen=True, slots=True)
class Column:
    """A column reference. ``name`` is the spelling shown; ``cid`` the bound identity."""

    name: str
    cid: int = -1
    type: str = "unknown"


@dataclass(frozen=True, slots=True)
class Literal:
    value: Any
    type: str = "unknown"


@dataclass(frozen=True, slots=True)
class Call:
    """Any operator or function call, by its SQL spelling (``=``, ``and``, ``like``, ``sum``).

    ``type`` is the target of a cast. A user-defined function has ``fn="udf"``
    and declares ``name``, ``cost`` and ``deterministic``. A function the request
    declares (``costmodel.functions``) carries its ``cost``, ``deterministic`` and
    ``may_fail``; one the engine does not know and nobody declared is ``opaque``.
    """

    fn: str
    args: tuple[Expr, ...] = ()
    distinct: bool = False
    type: str | None = None
    name: str | None = None
    cost: float | None = None
    deterministic: bool = True
    may_fail: bool = False
    #: a function the engine does not know and the request did not declare: maybe non-deterministic,
    #: maybe failing, of unknown cost; never moved (docs/api.md, "functions")
    opaque: bool = False

    def __eq__(self, other: object) -> bool:
        """Structural, without recursion (an expression may nest 10,000 levels)."""
        if not isinstance(other, Call):
            return NotImplemented
        return _equal(self, other)

    def __hash__(self) -> int:
        return _hash(self)


@dataclass(frozen=True, slots=True)
class Subquery:
    """A scalar, ``exists`` or ``in`` subquery. ``outer_refs``: outer columns it reads."""

    kind: str
    plan: Node
    args: tuple[Expr, ...] = ()
    outer_refs: frozenset[int] = frozenset()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Subquery):
            return NotImplemented
        return _equal(self, other)

    def __hash__(self) -> int:
        return _hash(self)


Expr = Column | Literal | Call | Subquery


def _own(expr: Call | Subquery) -> tuple[object, ...]:
    """The fields of a call or subquery besides its arguments (a subquery's plan by its id)."""
    if isinstance(expr, Call):
        return (expr.fn, expr.distinct, expr.type, expr.name, expr.cost, expr.deterministic, expr.may_fail, expr.opaque)
    return (expr.kind, expr.plan.id, expr.outer_refs)


def _equal(a: Expr, b: Expr) -> bool:
    """``a == b`` field by field, with an explicit stack (the generated ``__eq__`` recurses once per level)."""
    stack: list[tuple[Expr, Expr]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        if type(x) is not type(y):
            return False
        if isinstance(x, (Call, Subquery)):
            assert isinstance(y, (Call, Subquery))
            if len(x.args) != len(y.args) or _own(x) != _own(y):
                return False
            if isinstance(x, Subquery) and isinstance(y, Subquery) and x.plan is not y.plan and x.plan != y.plan:
                return False
            stack.extend(zip(x.args, y.args, strict=True))
        elif x != y:
            return False
    return True


#: Hashes of calls and subqueries computed in this optimization, by object (``costmodel.plan.plan_memo``):
#: without it, hashing each level of a deeply nested expression rehashes everything below (quadratic).
HASHES: Final[ContextVar[dict[int, tuple[Expr, int]] | None]] = ContextVar("expr_hashes", default=None)


def _hash(expr: Expr) -> int:
    """A hash agreeing with ``_equal``, computed children first with an explicit stack; inside a
    ``plan_memo`` each object's hash is kept, so a predicate rebuilt over old parts hashes only the new ones."""
    memo = HASHES.get()
    if memo is None:
        memo = {}
    hashes: list[int] = []
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if not isinstance(node, (Call, Subquery)):
            hashes.append(hash(node))
            continue
        hit = memo.get(id(node))
        if hit is not None and hit[0] is node:
            hashes.append(hit[1])
        elif not ready:
            stack.append((node, True))
            for arg in reversed(node.args):
                stack.append((arg, False))
        else:
            count = len(node.args)
            kids = tuple(hashes[len(hashes) - count :])
            del hashes[len(hashes) - count :]
            value = hash((type(node).__name__, _own(node), kids))
            memo[id(node)] = (node, value)
            hashes.append(value)
    return hashes[0]


TRUE: Final = Literal(True, "boolean")
FALSE: Final = Literal(False, "boolean")
NULL: Final = Literal(None, "null")


# ---------------------------------------------------------------- construction


def and_(parts: list[Expr] | tuple[Expr, ...]) -> Expr:
    """Conjunction of ``parts`` (flattened); ``TRUE`` when empty."""
    flat: list[Expr] = []
    for part in parts:
        flat.extend(conjuncts(part))
    if not flat:
        return TRUE
    if len(flat) == 1:
        return flat[0]
    return Call("and", tuple(flat))


def or_(parts: list[Expr]) -> Expr:
    flat: list[Expr] = []
    for part in parts:
        flat.extend(disjuncts(part))
    if len(flat) == 1:
        return flat[0]
    return Call("or", tuple(flat))


def conjuncts(expr: Expr) -> list[Expr]:
    """Split ``a AND (b AND c)`` into ``[a, b, c]`` (iterative: a nested chain may be deep)."""
    return _flatten(expr, "and")


def disjuncts(expr: Expr) -> list[Expr]:
    """Split ``a OR (b OR c)`` into ``[a, b, c]``."""
    return _flatten(expr, "or")


def _flatten(expr: Expr, fn: str) -> list[Expr]:
    if not (isinstance(expr, Call) and expr.fn == fn):
        return [expr]
    out: list[Expr] = []
    stack: list[Expr] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Call) and node.fn == fn:
            stack.extend(node.args[::-1])
        else:
            out.append(node)
    return out


# ---------------------------------------------------------------- traversal


def walk(expr: Expr, into_subqueries: bool = False) -> Iterator[Expr]:
    """Pre-order walk, iterative so deep expressions cannot overflow the stack."""
    stack: list[Expr] = [expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, Call):
            stack.extend(node.args[::-1])
        elif isinstance(node, Subquery):
            stack.extend(node.args[::-1])
            if into_subqueries:
                assert _plan_expressions is not None, "costmodel.plan lends its walker on import"
                stack.extend(_plan_expressions(node.plan))


def column_ids(expr: Expr) -> frozenset[int]:
    """Columns ``expr`` reads from its input, including a subquery's outer references. A loop of its own, not
    ``walk``: estimates, placement and the passes ask it of every predicate and expression, many times over.

    >>> sorted(column_ids(Call("=", (Column("a", 1), Call("+", (Column("b", 2), Literal(1)))))))
    [1, 2]
    """
    if isinstance(expr, Column):
        return frozenset((expr.cid,))
    out: set[int] = set()
    stack: list[Expr] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Column):
            out.add(node.cid)
        elif isinstance(node, Call):
            stack.extend(node.args)
        elif isinstance(node, Subquery):
            out.update(node.outer_refs)
            stack.extend(node.args)
    return frozenset(out)


def is_deterministic(expr: Expr) -> bool:
    """False when any call in ``expr`` (subqueries included) is non-deterministic or opaque. A loop of its own,
    as ``column_ids``: legality, inference and ordering ask it of every conjunct, some at every join.

    >>> is_deterministic(Call(">", (Column("a", 1), Call("rand", ())))), is_deterministic(Column("a", 1))
    (False, True)
    """
    stack: list[Expr] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Call):
            if node.fn in NONDETERMINISTIC or not node.deterministic or node.opaque:
                return False
            stack.extend(node.args)
        elif isinstance(node, Subquery):
            assert _plan_expressions is not None, "costmodel.plan lends its walker on import"
            stack.extend(node.args)
            stack.extend(_plan_expressions(node.plan))
    return True


def has_aggregate_or_window(expr: Expr) -> bool:
    """True for ``vals > min(vals)``: such a predicate reads all rows of its input. A loop of its own, as
    ``column_ids``.

    >>> has_aggregate_or_window(Call(">", (Column("v", 1), Call("min", (Column("v", 1),)))))
    True
    """
    return any_call(expr, _aggregate_or_window)


def _aggregate_or_window(node: Call) -> bool:
    return node.fn in AGGREGATES or node.fn in WINDOW_ONLY


def any_call(expr: Expr, test: Callable[[Call], bool]) -> bool:
    """Whether ``test`` holds for a call in ``expr``, a subquery's arguments included (not its plan). One loop
    for the questions the passes ask of every conjunct (``has_aggregate_or_window``, ``can_raise``)."""
    stack: list[Expr] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Call):
            if test(node):
                return True
            stack.extend(node.args)
        elif isinstance(node, Subquery):
            stack.extend(node.args)
    return False


def has_subquery(expr: Expr) -> bool:
    """Whether ``expr`` holds a subquery. A loop over calls only, not ``walk``: the optimizer asks it of every
    expression of every node, and most are a column or a literal.

    >>> has_subquery(Call("and", (Column("a", 1), Call("not", (Literal(True, "boolean"),)))))
    False
    """
    if isinstance(expr, Subquery):
        return True
    if not isinstance(expr, Call):
        return False
    stack: list[Call] = [expr]
    while stack:
        for arg in stack.pop().args:
            if isinstance(arg, Subquery):
                return True
            if isinstance(arg, Call):
                stack.append(arg)
    return False


def transform(expr: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rebuild ``expr`` bottom-up, replacing each node ``n`` by ``fn(n)`` when not None (iterative)."""
    results: list[Expr] = []
    # (node, number of args already rebuilt onto ``results``; -1: not yet expanded)
    stack: list[tuple[Expr, int]] = [(expr, -1)]
    while stack:
        node, count = stack.pop()
        if count < 0 and (isinstance(node, Call) or isinstance(node, Subquery) and node.args):
            stack.append((node, len(node.args)))
            for arg in reversed(node.args):
                stack.append((arg, -1))
            continue
        if count > 0:
            assert isinstance(node, (Call, Subquery))
            args = tuple(results[-count:])
            del results[-count:]
            if any(a is not b for a, b in zip(args, node.args, strict=True)):
                node = replace(node, args=args)
        result = fn(node)
        results.append(node if result is None else result)
    return results[0]


def substitute(expr: Expr, mapping: Mapping[int, Expr]) -> Expr:
    """Replace columns by cid, e.g. a project's output column by the expression that computes it."""
    return transform(expr, lambda node: mapping.get(node.cid) if isinstance(node, Column) else None)
