"""Reading a wire plan: parse and bind in one pass, bottom-up, every error with its JSON path.

A node's children are read first, which gives the scope its expressions are
resolved in. The generic parts live here (expressions, named expressions,
sort keys, ids, column resolution); each operator kind reads its own fields
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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from costmodel.catalog import Catalog
from costmodel.errors import PlanError
from costmodel.expr import Call, Column, Expr, Literal, Subquery
from costmodel.functions import KNOWN_FUNCTIONS, FunctionDecl
from costmodel.kinds.registry import OperatorKind, kind_for_op, wire_ops
from costmodel.plan import Field, NamedExpr, Node, SortKey, plan_memo
from costmodel.strict import check_keys
from costmodel.trampoline import Step, run

NAMED_KEYS = frozenset({"expr", "as"})
_SORT_KEY_KEYS = frozenset({"expr", "desc", "nulls_first"})
_COL_KEYS = frozenset({"col"})
_LIT_KEYS = frozenset({"lit", "type"})
_SUBQUERY_KEYS = frozenset({"subquery", "kind", "args"})
_CALL_KEYS = frozenset({"fn", "args", "distinct"})
_CAST_KEYS = _CALL_KEYS | {"type"}
_UDF_KEYS = _CALL_KEYS | {"name", "cost", "deterministic"}

#: Deepest nesting of nodes and expressions accepted; deeper input is refused (422 too_deep). Every walk is
#: iterative, so this bounds memory and time per request, not the interpreter's stack.
MAX_DEPTH = 100_000
#: Marks a path stand-in (``Binder.short``); no JSON path contains it.
_TOKEN = "\x00"
#: Deepest nesting of subqueries: each level is read and optimized as a plan of its own, a few Python frames
#: apiece, so this one bounds the interpreter's stack (docs/api.md).
MAX_SUBQUERY_DEPTH = 64

_ARITY = {
    "not": (1, 1),
    "is_null": (1, 1),
    "is_not_null": (1, 1),
    "neg": (1, 1),
    "between": (3, 3),
    "in": (2, None),
    "and": (1, None),
    "or": (1, None),
    "case": (2, None),
    "like": (2, 3),
    "ilike": (2, 3),
    "rlike": (2, 2),
    "cast": (1, 1),
}
for _op in ("=", "!=", "<>", "<", "<=", ">", ">=", "<=>", "+", "-", "*", "/", "%"):
    _ARITY[_op] = (2, 2)


def _literal_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    return "string"


def _field_label(f: Field) -> str:
    return f"{f.qualifier}.{f.name}" if f.qualifier else f.name


@dataclass
class Binder:
    """Reads and binds one wire plan; kinds' ``read`` hooks call back into it for children and expressions."""

    catalog: Catalog
    taken_ids: set[str]
    #: functions the request declares (``costmodel.functions``), by lower-case name
    functions: Mapping[str, FunctionDecl] = field(default_factory=dict)
    next_cid: int = 0
    next_id: int = 0
    outer: list[tuple[Field, ...]] = field(default_factory=list)
    outer_hits: list[set[int]] = field(default_factory=list)
    #: nodes read ahead of their parent's ``read``, by JSON path (``node``)
    _read: dict[str, Node] = field(default_factory=dict)
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

    def resolve(self, name: str, scope: tuple[Field, ...], path: str) -> Column:
        qualifier, _, base = name.rpartition(".")
        base_l, qual_l = base.lower(), qualifier.lower()

        def matches(fields: tuple[Field, ...]) -> list[Field]:
            found = []
            for f in fields:
                if f.name.lower() != base_l:
                    continue
                if qualifier and (f.qualifier or "").lower() != qual_l:
                    continue
                found.append(f)
            # the same column reachable twice (e.g. SELECT a, a) is not ambiguous
            unique = {f.cid: f for f in found}
            return list(unique.values())

        hits = matches(scope)
        if not hits:
            for depth in range(len(self.outer) - 1, -1, -1):
                hits = matches(self.outer[depth])
                if hits:
                    if len(hits) == 1:  # an outer reference of every subquery opened at or inside `depth`
                        for level in range(depth, len(self.outer_hits)):
                            self.outer_hits[level].add(hits[0].cid)
                    break
        if not hits:
            raise PlanError(
                "unknown_column",
                f"unknown column {name!r}",
                path,
                {"column": name, "available": [_field_label(f) for f in scope]},
            )
        if len(hits) > 1:
            raise PlanError(
                "ambiguous_column",
                f"column {name!r} is ambiguous",
                path,
                {"column": name, "candidates": [_field_label(f) for f in hits]},
            )
        f = hits[0]
        return Column(name, f.cid, f.type)

    # -------------------------------------------------------------- expressions

    def expr(self, raw: Any, scope: tuple[Field, ...], path: str, depth: int) -> Expr:
        """Read and bind one expression (without recursion: an expression may nest 10,000 levels)."""
        return run(self._expr(raw, scope, path, depth))

    def _expr(self, raw: Any, scope: tuple[Field, ...], path: str, depth: int) -> Step[Expr]:
        if depth > MAX_DEPTH:
            raise PlanError("too_deep", f"expression nests deeper than {MAX_DEPTH} levels", path)
        if not isinstance(raw, dict):
            raise PlanError("invalid_expression", "an expression must be an object", path)
        if "col" in raw:
            check_keys(raw, _COL_KEYS, path)
            name = raw["col"]
            if not isinstance(name, str) or not name:
                raise PlanError("invalid_expression", "col must be a non-empty string", f"{path}.col")
            return self.resolve(name, scope, f"{path}.col")
        if "lit" in raw:
            check_keys(raw, _LIT_KEYS, path)
            value = raw["lit"]
            if isinstance(value, (dict, list)):
                raise PlanError("invalid_expression", "lit must be a scalar", f"{path}.lit")
            typ = raw.get("type") or _literal_type(value)
            if not isinstance(typ, str):
                raise PlanError("invalid_expression", "type must be a string", f"{path}.type")
            return Literal(value, typ.lower())
        if "subquery" in raw:
            check_keys(raw, _SUBQUERY_KEYS, path)
            return self.subquery(raw, scope, path, depth)
        if "fn" in raw:
            fn = raw["fn"]
            if not isinstance(fn, str) or not fn:
                raise PlanError("invalid_expression", "fn must be a non-empty string", f"{path}.fn")
            fn = fn.lower()
            check_keys(raw, _CAST_KEYS if fn == "cast" else _UDF_KEYS if fn == "udf" else _CALL_KEYS, path)
            args_raw = raw.get("args", [])
            if not isinstance(args_raw, list):
                raise PlanError("invalid_expression", "args must be a list", f"{path}.args")
            bounds = _ARITY.get(fn)
            if bounds is not None:
                low, high = bounds
                if len(args_raw) < low or (high is not None and len(args_raw) > high):
                    expected = str(low) if low == high else f"at least {low}" if high is None else f"{low}..{high}"
                    raise PlanError(
                        "invalid_arity",
                        f"{fn} takes {expected} arguments, got {len(args_raw)}",
                        f"{path}.args",
                    )
            args_read: list[Expr] = []
            for i, a in enumerate(args_raw):
                args_read.append((yield self._expr(a, scope, self.short(f"{path}.args[{i}]"), depth + 1)))
            args = tuple(args_read)
            if fn == "cast":
                typ = raw.get("type")
                if not isinstance(typ, str):
                    raise PlanError("invalid_expression", "cast needs a target type", f"{path}.type")
                return Call("cast", args, type=typ.lower())
            if fn == "udf":
                name = raw.get("name")
                if not isinstance(name, str) or not name:
                    raise PlanError("invalid_expression", "a udf needs a name", f"{path}.name")
                cost = raw.get("cost")
                if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float)) or cost < 0):
                    raise PlanError("invalid_expression", "cost must be a non-negative number", f"{path}.cost")
                decl = self.functions.get(name.lower(), FunctionDecl())  # the call's own fields win
                det = raw.get("deterministic", decl.deterministic)
                if not isinstance(det, bool):
                    raise PlanError(
                        "invalid_expression", "deterministic must be true or false", f"{path}.deterministic"
                    )
                cost = decl.cost if cost is None else float(cost)
                return Call("udf", args, name=name, cost=cost, deterministic=det, may_fail=decl.may_fail)
            if fn in ("and", "or") and len(args) == 1:
                return args[0]
            if fn == "<>":
                fn = "!="
            distinct = raw.get("distinct", False)
            if not isinstance(distinct, bool):
                raise PlanError("invalid_expression", "distinct must be true or false", f"{path}.distinct")
            declared = self.functions.get(fn)
            if declared is not None:
                return Call(
                    fn,
                    args,
                    distinct=distinct,
                    cost=declared.cost,
                    deterministic=declared.deterministic,
                    may_fail=declared.may_fail,
                )
            return Call(fn, args, distinct=distinct, opaque=fn not in KNOWN_FUNCTIONS)
        raise PlanError(
            "invalid_expression",
            "an expression needs one of col, lit, fn, subquery",
            path,
            {"keys": sorted(raw)},
        )

    def subquery(self, raw: dict[str, Any], scope: tuple[Field, ...], path: str, depth: int) -> Expr:
        if len(self.outer) >= MAX_SUBQUERY_DEPTH:
            raise PlanError("too_deep", f"subqueries nest deeper than {MAX_SUBQUERY_DEPTH} levels", path)
        kind = raw.get("kind", "scalar")
        if kind not in ("scalar", "exists", "in"):
            raise PlanError("invalid_expression", "subquery kind must be scalar, exists or in", f"{path}.kind")
        self.outer.append(scope)
        hits: set[int] = set()
        self.outer_hits.append(hits)
        try:
            plan = self.node(raw["subquery"], f"{path}.subquery", depth + 1)
        finally:
            self.outer.pop()
            self.outer_hits.pop()
        args_raw = raw.get("args", [])
        if not isinstance(args_raw, list):
            raise PlanError("invalid_expression", "args must be a list", f"{path}.args")
        args = tuple(self.expr(a, scope, f"{path}.args[{i}]", depth + 1) for i, a in enumerate(args_raw))
        if kind == "in" and len(args) != 1:
            raise PlanError("invalid_arity", "an in-subquery takes exactly one argument", f"{path}.args")
        return Subquery(kind, plan, args, frozenset(hits))

    def named(
        self,
        raw: Any,
        scope: tuple[Field, ...],
        path: str,
        depth: int,
        index: int,
        keys: frozenset[str] = NAMED_KEYS,
    ) -> NamedExpr:
        if not isinstance(raw, dict) or "expr" not in raw:
            raise PlanError("invalid_node", 'expected {"expr": ..., "as": name}', path)
        check_keys(raw, keys, path)
        expr = self.expr(raw["expr"], scope, f"{path}.expr", depth + 1)
        name = raw.get("as")
        if name is not None and not isinstance(name, str):
            raise PlanError("invalid_node", "as must be a string", f"{path}.as")
        if isinstance(expr, Column):
            base = expr.name.rpartition(".")[2]
            if name is None or name.lower() == base.lower():
                qualifier = next((f.qualifier for f in scope if f.cid == expr.cid), None)
                return NamedExpr(expr, name or base, expr.cid, qualifier)
        return NamedExpr(expr, name or f"_c{index}", self.cid())

    def sort_keys(self, raw: Any, scope: tuple[Field, ...], path: str, depth: int) -> tuple[SortKey, ...]:
        if not isinstance(raw, list):
            raise PlanError("invalid_node", "sort keys must be a list", path)
        keys = []
        for i, item in enumerate(raw):
            kpath = f"{path}[{i}]"
            if not isinstance(item, dict) or "expr" not in item:
                raise PlanError("invalid_node", 'a sort key is {"expr", "desc", "nulls_first"}', kpath)
            check_keys(item, _SORT_KEY_KEYS, kpath)
            desc, nulls_first = item.get("desc", False), item.get("nulls_first")
            if not isinstance(desc, bool):
                raise PlanError("invalid_node", "desc must be true or false", f"{kpath}.desc")
            if nulls_first is not None and not isinstance(nulls_first, bool):
                raise PlanError("invalid_node", "nulls_first must be true, false or null", f"{kpath}.nulls_first")
            keys.append(SortKey(self.expr(item["expr"], scope, f"{kpath}.expr", depth + 1), desc, nulls_first))
        return tuple(keys)

    def expr_list(self, raw: Any, scope: tuple[Field, ...], path: str, depth: int) -> tuple[Expr, ...]:
        if raw is None:
            return ()
        if not isinstance(raw, list):
            raise PlanError("invalid_node", "expected a list of expressions", path)
        return tuple(self.expr(item, scope, f"{path}[{i}]", depth + 1) for i, item in enumerate(raw))

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
                kids = kind.wire_children(item, token)
                stack.extend((kid, kid_path, level + 1, None, "", "") for kid, kid_path in reversed(kids))
                continue
            self._read[where] = kind.read(self, item, token, level, nid)
        return self._read.pop(path)

    def _enter(self, raw: Any, path: str, depth: int) -> OperatorKind[Any]:
        if depth > MAX_DEPTH:
            raise PlanError("too_deep", f"plan nests deeper than {MAX_DEPTH} levels", path)
        if not isinstance(raw, dict):
            raise PlanError("invalid_node", "a plan node must be an object", path)
        op = raw.get("op")
        kind = kind_for_op(op) if isinstance(op, str) else None
        if kind is None:
            raise PlanError("unknown_op", f"unknown op {op!r}", f"{path}.op", {"known": list(wire_ops())})
        check_keys(raw, kind.wire_keys | {"op", "id"}, path)
        return kind


def _collect_ids(raw: Any) -> set[str]:
    """Ids the caller gave, found without recursion; duplicates are refused (with the second one's path)."""
    seen: set[str] = set()
    stack: list[Any] = [raw]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "op" in item and isinstance(item.get("id"), (str, int)) and not isinstance(item.get("id"), bool):
                node_id = str(item["id"])
                if node_id in seen:
                    raise PlanError("duplicate_id", f"node id {node_id!r} is used twice", f"{_path_to(raw, item)}.id")
                seen.add(node_id)
            stack.extend(value for value in item.values() if isinstance(value, (dict, list)))
        elif isinstance(item, list):
            stack.extend(value for value in item if isinstance(value, (dict, list)))
    return seen


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
    deepest = 0
    stack: list[tuple[Any, int]] = [(raw, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return deepest


def plan_from_wire(
    raw: Any, catalog: Catalog, path: str = "$.plan", functions: Mapping[str, FunctionDecl] | None = None
) -> Node:
    """Read and bind a wire plan; raises ``PlanError`` with the JSON path of the fault.

    ``functions``: the request's declared functions; a call to any other function the engine does not
    know is opaque (``costmodel.functions``).
    """
    if json_depth(raw) > 3 * MAX_DEPTH:
        raise PlanError("too_deep", f"plan nests deeper than {MAX_DEPTH} levels", path)
    binder = Binder(catalog, _collect_ids(raw), dict(functions or {}))
    with plan_memo():
        try:
            return binder.node(raw, path, 0)
        except PlanError as err:
            if not err.path.startswith(_TOKEN):
                raise
            raise type(err)(err.code, err.message, binder.full_path(err.path), err.detail) from None
