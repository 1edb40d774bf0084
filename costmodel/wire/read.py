"""Reading a wire plan: parse and bind in one pass, bottom-up, every error with its JSON path.

A node's children are read first, which gives the scope its expressions are
resolved in. The generic parts of nodes live here (ids, path stand-ins, limits,
duplicate ids); expressions, named expressions, sort keys and column resolution
in ``costmodel.wire.read_expr``; each operator kind reads its own fields
through its ``read`` hook (``costmodel.kinds``).

Example::

    >>> from costmodel.catalog import catalog_from_wire
    >>> cat = catalog_from_wire({"tables": {"t": {"columns": ["a", "b"]}}})
    >>> plan = plan_from_wire({"op": "filter", "predicate": {"fn": ">", "args": [
    ...     {"col": "a"}, {"lit": 1}]}, "input": {"op": "scan", "table": "t"}}, cat)
    >>> plan.id, plan.input.id
    ('n1', 'n2')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from costmodel.catalog import Catalog
from costmodel.errors import PlanError
from costmodel.functions import FunctionDecl
from costmodel.kinds.registry import OperatorKind, kind_for_op, wire_ops
from costmodel.plan import Field, Node, plan_memo
from costmodel.strict import check_keys
from costmodel.wire.read_expr import ExpressionReader
from costmodel.wire.scopes import Scopes

#: Deepest nesting of nodes and expressions accepted; deeper input is refused (422 too_deep). Every walk is
#: iterative, so this bounds memory and time per request, not the interpreter's stack.
MAX_DEPTH = 100_000
#: Marks a path stand-in (``Binder.short``); no JSON path contains it.
_TOKEN: Final = "\x00"
#: Deepest nesting of subqueries: each level is read and optimized as a plan of its own, a few Python frames
#: apiece, so this one bounds the interpreter's stack (docs/api.md).
MAX_SUBQUERY_DEPTH: Final = 64


@dataclass
class Binder(ExpressionReader):
    """Reads and binds one wire plan; kinds' ``read`` hooks call back into it for children and expressions."""

    catalog: Catalog
    taken_ids: set[str]
    #: functions the request declares (``costmodel.functions``), by lower-case name
    functions: dict[str, FunctionDecl] = field(default_factory=dict)
    next_cid: int = 0
    next_id: int = 0
    outer: list[tuple[Field, ...]] = field(default_factory=list)
    outer_hits: list[set[int]] = field(default_factory=list)
    #: nodes read ahead of their parent's ``read``, by JSON path (``node``)
    _read: dict[str, Node] = field(default_factory=dict)
    #: each scope's columns by name (a join's built from its inputs': ``Scopes.joined``)
    scopes: Scopes = field(default_factory=Scopes)
    #: JSON paths stood in for by short tokens (``short``): a path spelled out at every level of a
    #: 10,000-level plan would make reading it quadratic
    _paths: list[str] = field(default_factory=list)

    # -------------------------------------------------------------- helpers

    def short(self, path: str) -> str:
        """A short stand-in for ``path``; ``full_path`` spells it out again (for an error)."""
        self._paths.append(path)
        return f"{_TOKEN}{len(self._paths) - 1}{_TOKEN}"

    def full_path(self, path: str) -> str:
        """``path`` with every stand-in spelled out."""
        suffixes: list[str] = []
        while path.startswith(_TOKEN):
            end = path.index(_TOKEN, 1)
            suffixes.append(path[end + 1 :])
            path = self._paths[int(path[1:end])]
        return path + "".join(reversed(suffixes))

    def cid(self) -> int:
        self.next_cid += 1
        return self.next_cid

    def node_id(self, raw: dict[str, Any], path: str) -> str:
        given = raw.get("id")
        if given is not None:
            if not isinstance(given, (str, int)) or isinstance(given, bool):
                raise PlanError("invalid_id", "a node id must be a string", f"{path}.id")
            return str(given)
        while True:
            self.next_id += 1
            candidate = f"n{self.next_id}"
            if candidate not in self.taken_ids:
                self.taken_ids.add(candidate)
                return candidate

    # -------------------------------------------------------------- nodes

    def child(self, raw: dict[str, Any], key: str, path: str, depth: int) -> Node:
        if key not in raw:
            raise PlanError("missing_field", f"{raw.get('op')} needs {key!r}", f"{path}.{key}")
        return self.node(raw[key], f"{path}.{key}", depth + 1)

    def node(self, raw: Any, path: str, depth: int) -> Node:
        """Read the node at ``path``: the one already read there (a kind's ``read`` asking for its child), or
        a fresh read of its subtree, children first with an explicit stack (a plan may nest 10,000 levels).

        Ids are minted in pre-order and column ids in post-order, left to right, as a recursive reader would.
        """
        done = self._read.pop(path, None)
        if done is not None:
            return done
        # (raw node, its path, its depth, its kind once entered, its id, the stand-in for its path)
        stack: list[tuple[Any, str, int, OperatorKind[Any] | None, str, str]] = [(raw, path, depth, None, "", "")]
        while stack:
            item, where, level, kind, nid, token = stack.pop()
            if kind is None:  # entering: check it, give it its id, then read its children first
                kind = self._enter(item, where, level)
                nid = self.node_id(item, where)
                token = self.short(where)
                stack.append((item, where, level, kind, nid, token))
                kids: list[tuple[Any, str]] = kind.wire_children(item, token)
                for kid, kid_path in kids[::-1]:
                    stack.append((kid, kid_path, level + 1, None, "", ""))
                continue
            self._read[where] = kind.read(self, item, token, level, nid)
        return self._read.pop(path)

    def check_depth(self, depth: int, what: str, path: str) -> None:
        """Refuse nesting past ``MAX_DEPTH`` (read when called: tests lower it)."""
        if depth > MAX_DEPTH:
            raise PlanError("too_deep", f"{what} nests deeper than {MAX_DEPTH} levels", path)

    def check_subqueries(self, path: str) -> None:
        if len(self.outer) >= MAX_SUBQUERY_DEPTH:
            raise PlanError("too_deep", f"subqueries nest deeper than {MAX_SUBQUERY_DEPTH} levels", path)

    def _enter(self, raw: Any, path: str, depth: int) -> OperatorKind[Any]:
        self.check_depth(depth, "plan", path)
        if not isinstance(raw, dict):
            raise PlanError("invalid_node", "a plan node must be an object", path)
        op = raw.get("op")
        kind = kind_for_op(op) if isinstance(op, str) else None
        if kind is None:
            raise PlanError("unknown_op", f"unknown op {op!r}", f"{path}.op", {"known": list(wire_ops())})
        check_keys(raw, kind.wire_keys | {"op", "id"}, path)
        return kind


def _ids_and_depth(raw: Any) -> tuple[set[str], int, Any]:
    """Ids the caller gave, the nesting depth, and the first node whose id was given twice (or None): one walk
    without recursion, so the depth is checked before a duplicate is reported."""
    seen: set[str] = set()
    twice: Any = None
    deepest = 0
    stack: list[tuple[Any, int]] = [(raw, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            mapping: dict[Any, Any] = item
            node_id = mapping.get("id")
            if "op" in mapping and isinstance(node_id, (str, int)) and not isinstance(node_id, bool):
                key = str(node_id)
                if key in seen and twice is None:
                    twice = item
                seen.add(key)
            if depth > deepest:
                deepest = depth
            for value in mapping.values():  # a loop per container type: native, where an Iterable's is not
                if type(value) is dict or type(value) is list or isinstance(value, (dict, list)):
                    stack.append((value, depth + 1))
        elif isinstance(item, list):
            sequence: list[Any] = item
            if depth > deepest:
                deepest = depth
            for value in sequence:
                if type(value) is dict or type(value) is list or isinstance(value, (dict, list)):
                    stack.append((value, depth + 1))
    return seen, deepest, twice


def _path_to(raw: Any, target: Any) -> str:
    """The JSON path of ``target`` inside ``raw`` (spelled out only for an error: paths of deep input are long)."""
    stack: list[tuple[Any, str]] = [(raw, "$.plan")]
    while stack:
        item, path = stack.pop()
        if item is target:
            return path
        if isinstance(item, dict):
            stack.extend((v, f"{path}.{k}") for k, v in item.items() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item) if isinstance(v, (dict, list)))
    return "$.plan"


def json_depth(raw: Any) -> int:
    """Nesting depth of a decoded JSON value, computed without recursion."""
    return _ids_and_depth(raw)[1]


def plan_from_wire(
    raw: Any, catalog: Catalog, path: str = "$.plan", functions: dict[str, FunctionDecl] | None = None
) -> Node:
    """Read and bind a wire plan; raises ``PlanError`` with the JSON path of the fault.

    ``functions``: the request's declared functions; a call to any other function the engine does not
    know is opaque (``costmodel.functions``).
    """
    given, depth, twice = _ids_and_depth(raw)
    if depth > 3 * MAX_DEPTH:
        raise PlanError("too_deep", f"plan nests deeper than {MAX_DEPTH} levels", path)
    if twice is not None:
        node_id = str(twice["id"])
        raise PlanError("duplicate_id", f"node id {node_id!r} is used twice", f"{_path_to(raw, twice)}.id")
    binder = Binder(catalog, given, dict(functions or {}))
    with plan_memo():
        try:
            return binder.node(raw, path, 0)
        except PlanError as err:
            if not err.path.startswith(_TOKEN):
                raise
            raise type(err)(err.code, err.message, binder.full_path(err.path), err.detail) from None
