"""Reading a wire plan's expressions: columns resolved in their scope, literals, calls, casts, UDFs,
subqueries, named expressions and sort keys, every error with its JSON path.

The expression half of ``costmodel.wire.read.Binder`` (which reads the nodes and owns the limits): a node
kind's ``read`` hook asks the binder for its expressions in the scope its inputs give.
"""

from __future__ import annotations

from typing import Any, Final

from costmodel.errors import PlanError
from costmodel.expr import Call, Column, Expr, Literal, Subquery
from costmodel.functions import KNOWN_FUNCTIONS, FunctionDecl
from costmodel.plan import Field, NamedExpr, Node, SortKey
from costmodel.strict import check_keys
from costmodel.trampoline import Done, Step, run
from costmodel.wire.scopes import Scopes

NAMED_KEYS: Final = frozenset({"expr", "as"})
_SORT_KEY_KEYS: Final = frozenset({"expr", "desc", "nulls_first"})
_COL_KEYS: Final = frozenset({"col"})
_LIT_KEYS: Final = frozenset({"lit", "type"})
_SUBQUERY_KEYS: Final = frozenset({"subquery", "kind", "args"})
_CALL_KEYS: Final = frozenset({"fn", "args", "distinct"})
_CAST_KEYS: Final = _CALL_KEYS | {"type"}
_UDF_KEYS: Final = _CALL_KEYS | {"name", "cost", "deterministic"}


_ARITY: Final = {
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


def _distinct(found: tuple[Field, ...]) -> list[Field]:
    """``found`` once per column: the same column reachable twice (``SELECT a, a``) is not ambiguous."""
    if len(found) == 1:
        return [found[0]]
    return list({f.cid: f for f in found}.values())


def _field_label(f: Field) -> str:
    return f"{f.qualifier}.{f.name}" if f.qualifier else f.name


class ExpressionReader:
    """Reads and binds expressions; mixed into ``Binder``, which holds the state named here."""

    functions: dict[str, FunctionDecl]
    outer: list[tuple[Field, ...]]
    outer_hits: list[set[int]]
    scopes: Scopes

    # the binder's own (costmodel.wire.read)
    def short(self, path: str) -> str:
        raise NotImplementedError

    def cid(self) -> int:
        raise NotImplementedError

    def node(self, raw: Any, path: str, depth: int) -> Node:
        raise NotImplementedError

    def check_depth(self, depth: int, what: str, path: str) -> None:
        raise NotImplementedError

    def check_subqueries(self, path: str) -> None:
        raise NotImplementedError

    def resolve(self, name: str, scope: tuple[Field, ...], path: str) -> Column:
        qualifier, _, base = name.rpartition(".")
        base_l, qual_l = base.lower(), qualifier.lower()
        hits = _distinct(self.scopes.named(scope, base_l, qual_l))
        if not hits:
            for depth in range(len(self.outer) - 1, -1, -1):
                hits = _distinct(self.scopes.named(self.outer[depth], base_l, qual_l))
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
        leaf = self._leaf(raw, scope, path, depth)
        return leaf if leaf is not None else run(self._expr(raw, scope, path, depth))

    def _leaf(self, raw: Any, scope: tuple[Field, ...], path: str, depth: int) -> Expr | None:
        """A column or a literal, read; None for an expression with operands (``_expr``). Most operands are
        leaves: read directly, they cost no trampoline step."""
        self.check_depth(depth, "expression", path)
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
        return None

    def _expr(self, raw: dict[str, Any], scope: tuple[Field, ...], path: str, depth: int) -> Step[Expr]:
        """An expression with operands (``_leaf`` read it is not a leaf), its operands read first."""
        if "subquery" in raw:
            check_keys(raw, _SUBQUERY_KEYS, path)
            yield Done(self.subquery(raw, scope, path, depth))
            return
        if "fn" not in raw:
            raise PlanError(
                "invalid_expression",
                "an expression needs one of col, lit, fn, subquery",
                path,
                {"keys": sorted(raw)},
            )
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
            at = self.short(f"{path}.args[{i}]")
            leaf = self._leaf(a, scope, at, depth + 1)
            args_read.append(leaf if leaf is not None else (yield self._expr(a, scope, at, depth + 1)))
        yield Done(self._call(fn, tuple(args_read), raw, path))

    def _call(self, fn: str, args: tuple[Expr, ...], raw: dict[str, Any], path: str) -> Expr:
        """Call ``fn`` (lower case, its arity checked) on ``args``, read, with the rest of its fields."""
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
                raise PlanError("invalid_expression", "deterministic must be true or false", f"{path}.deterministic")
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

    def subquery(self, raw: dict[str, Any], scope: tuple[Field, ...], path: str, depth: int) -> Expr:
        self.check_subqueries(path)
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
