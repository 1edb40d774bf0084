"""The operator-kind registry: every behaviour of an operator kind, in one record per kind.

A kind's module (``costmodel/kinds/<kind>.py``) builds one ``OperatorKind``
and registers it; the engine's generic code (plan walks, the wire reader and
writer, EXPLAIN, legality, the cost model, join-key inference, scan access)
asks the registry instead of switching on node classes. Every hook is a
required field, so a kind cannot be registered with one missing, and a node
whose kind is not registered raises ``UnknownKind`` instead of falling to a
default. docs/operator-kinds.md shows how to add one.

The two dispatches over kinds are exhaustive, so that mypy names each place a
new kind must be handled: ``kind_name`` is a ``match`` over the ``Node`` union
ending in ``assert_never`` (a node class added to the union without a case is a
type error there), and ``WireOp`` lists the wire ``op`` names, which every
dispatch over wire dicts matches exhaustively (``service.sql``'s renderer and
name rules; the client keeps its own copy, tested equal).

This module imports only the node classes from the engine at run time, so the
modules that consult it (``costmodel.plan`` included) and the kinds that fill
it never form an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeGuard, TypeVar, assert_never, get_args

from costmodel.plan_nodes import (
    Aggregate,
    Alias,
    Distinct,
    Filter,
    Generate,
    Join,
    Limit,
    Node,
    Project,
    Sample,
    Scan,
    SetOp,
    Sort,
    Window,
)

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.expr import Column, Expr
    from costmodel.plan import Field
    from costmodel.rules import Outcome
    from costmodel.wire.names import Namer
    from costmodel.wire.read import Binder

#: ``output_fields`` of a kind whose rows have exactly its (first) input's columns.
SAME_AS_INPUT: Final[Literal["same_as_input"]] = "same_as_input"

#: the node class one kind describes: its hooks take that class, not any node
N = TypeVar("N")


class UnknownKind(TypeError):
    """A node whose class no registered kind claims: a bug, never a default."""


@dataclass(frozen=True, slots=True)
class OperatorKind(Generic[N]):
    """Everything the engine needs to know about one kind of plan node (a ``N``)."""

    #: the kind's name: its key in ``options.operator_costs`` and in docs
    name: str
    node_type: type[N]
    #: wire ``op`` names this kind reads (``union``, ``intersect`` and ``except`` share one kind)
    ops: tuple[str, ...]
    #: wire keys a node of this kind may carry besides ``op`` and ``id``
    wire_keys: frozenset[str]
    #: per-row cost constant k, relative to one plain comparison (docs/cost-model.md)
    default_k: float
    # ---- shape (its inputs: the node class's own ``children`` and ``with_children``, costmodel.plan_nodes)
    #: the columns it emits, or SAME_AS_INPUT
    output_fields: Callable[[N], tuple[Field, ...]] | Literal["same_as_input"]
    #: the columns its own expressions are resolved against
    scope: Callable[[N], tuple[Field, ...]]
    #: every expression it holds
    expressions: Callable[[N], list[Expr]]
    #: the name shown for it in cost tables: a string, or made from the node where nodes of the kind differ (a set
    #: operation shows which one); a string costs no call per estimate
    label: str | Callable[[N], str]
    # ---- wire and rendering
    read: Callable[[Binder, dict[str, Any], str, int, str], Node]
    #: the wire values ``read`` will read as child nodes, with their JSON paths, in the order it reads them;
    #: the reader reads them first, bottom-up without recursion, and ``read`` then gets them back
    wire_children: Callable[[dict[str, Any], str], list[tuple[Any, str]]]
    write: Callable[[N, Namer, Callable[[Node], dict[str, Any]]], dict[str, Any]]
    describe: Callable[[N, Namer], str]
    #: the operator's name, as its EXPLAIN line starts and the per-predicate summary names it (``Filter``,
    #: ``Inner Join``, ``TableScan orders``): read from the node alone, without rendering its expressions
    title: Callable[[N], str]
    # ---- legality, estimate, inference, scan access
    #: where a predicate on its output may go instead (``costmodel.rules``)
    push_through: Callable[[Expr, N], Outcome]
    #: rows, NDVs and cost, given its inputs' estimates
    estimate: Callable[[CostModel, N, list[RowEstimate], tuple[float, ...]], RowEstimate]
    #: column equalities that hold on every row it emits, and the inputs whose equalities still hold
    key_equalities: Callable[[N], tuple[list[tuple[Column, Column]], tuple[Node, ...]]]
    #: per input: are that input's rows possibly NULL-padded above, given whether this node's are
    null_supplying: Callable[[N, bool], tuple[bool, ...]]
    #: an index on the scan under it can still serve a join reading it (it keeps the scan's rows as they are)
    index_join_through: bool
    #: it renames or recomputes columns, so a correlated subquery's outer references would need rewriting below it
    renames_columns: bool


_BY_TYPE: Final[dict[type, OperatorKind[Any]]] = {}
_BY_OP: Final[dict[str, OperatorKind[Any]]] = {}
_BY_NAME: Final[dict[str, OperatorKind[Any]]] = {}


def register(kind: OperatorKind[N]) -> OperatorKind[N]:
    """Add ``kind``; a second kind claiming the same class, op or name is a bug."""
    claimed = {k.node_type for k in _BY_NAME.values()}
    if kind.node_type in claimed or kind.name in _BY_NAME or any(op in _BY_OP for op in kind.ops):
        raise ValueError(f"operator kind {kind.name!r} is registered twice")
    _BY_NAME[kind.name] = kind
    for op in kind.ops:
        _BY_OP[op] = kind
    return kind


#: Every wire ``op`` name. A dispatch over wire dicts narrows ``op`` to it (``is_wire_op``) and matches it
#: exhaustively; tests/costmodel/test_kinds.py checks it against the registered kinds' ``ops``.
WireOp = Literal[
    "scan",
    "filter",
    "project",
    "aggregate",
    "join",
    "union",
    "intersect",
    "except",
    "sort",
    "limit",
    "window",
    "distinct",
    "alias",
    "generate",
    "sample",
]
WIRE_OPS: Final[frozenset[str]] = frozenset(get_args(WireOp))


def is_wire_op(op: object) -> TypeGuard[WireOp]:
    return op in WIRE_OPS


def kind_name(node: Node) -> str:
    """The name of ``node``'s kind (``OperatorKind.name``, its key in ``options.operator_costs``).

    Exhaustive over the node union: a class added to it is a type error here until it names its kind.
    """
    match node:
        case Scan():
            return "scan"
        case Filter():
            return "filter"
        case Join():
            return "join"
        case Project():
            return "project"
        case Aggregate():
            return "aggregate"
        case SetOp():
            return "union"  # union, intersect and except: one kind
        case Sort():
            return "sort"
        case Limit():
            return "limit"
        case Window():
            return "window"
        case Distinct():
            return "distinct"
        case Alias():
            return "alias"
        case Generate():
            return "generate"
        case Sample():
            return "sample"
        case _:
            assert_never(node)


def kind_of(node: Node) -> OperatorKind[Any]:
    """The kind of ``node``; raises ``UnknownKind`` for a class no kind claims.

    ``kind_name`` says which kind a class has, on the first node of the class; the answer is kept by class. A class
    outside the union, or whose kind's module was not imported, has none.
    """
    kind = _BY_TYPE.get(type(node))
    if kind is None:
        kind = _BY_NAME.get(kind_name(node)) if type(node) in get_args(Node) else None
        if kind is None or kind.node_type is not type(node):
            raise UnknownKind(f"no operator kind is registered for {type(node).__name__}")
        _BY_TYPE[type(node)] = kind
    return kind


def kind_for_op(op: str) -> OperatorKind[Any] | None:
    """The kind reading wire ``op``, or None when no kind does."""
    return _BY_OP.get(op)


def all_kinds() -> tuple[OperatorKind[Any], ...]:
    return tuple(_BY_NAME.values())


def wire_ops() -> tuple[str, ...]:
    return tuple(_BY_OP)
