"""The wire format (design.md's contract): read and bind, and write back.

Reading and binding happen in one pass, bottom-up: a node's children are read
first, which gives the scope its expressions are resolved in. Every error
carries the JSON path of the value at fault.

Example::

    >>> from costmodel.catalog import catalog_from_wire
    >>> cat = catalog_from_wire({"tables": {"t": {"columns": ["a", "b"]}}})
    >>> plan = plan_from_wire({"op": "filter", "predicate": {"fn": ">", "args": [
    ...     {"col": "a"}, {"lit": 1}]}, "input": {"op": "scan", "table": "t"}}, cat)
    >>> plan_to_wire(plan)["predicate"]
    {'fn': '>', 'args': [{'col': 'a'}, {'lit': 1, 'type': 'int'}]}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from costmodel.catalog import Catalog
from costmodel.errors import PlanError
from costmodel.expr import Call, Column, Expr, Literal, Subquery
from costmodel.plan import (
    Aggregate,
    Alias,
    Distinct,
    Field,
    Filter,
    IndexLookup,
    Join,
    Limit,
    NamedExpr,
    Node,
    Project,
    Scan,
    SetOp,
    Sort,
    SortKey,
    Window,
    WindowFrame,
    children,
    output_fields,
)
from costmodel.strict import check_keys

JOIN_TYPES = ("inner", "left", "right", "full", "semi", "anti", "cross")
NODE_OPS = (
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
)
#: The keys each node reads besides ``op`` and ``id`` (design.md's wire contract); any other key is an error.
NODE_KEYS: dict[str, frozenset[str]] = {
    "scan": frozenset({"table", "alias", "filters", "columns", "containers", "index"}),
    "filter": frozenset({"predicate", "input"}),
    "project": frozenset({"exprs", "input"}),
    "aggregate": frozenset({"group_by", "aggregates", "grouping_sets", "input"}),
    "join": frozenset({"type", "on", "null_aware", "left", "right"}),
    "union": frozenset({"all", "inputs"}),
    "intersect": frozenset({"all", "inputs"}),
    "except": frozenset({"all", "inputs"}),
    "sort": frozenset({"keys", "limit", "input"}),
    "limit": frozenset({"count", "offset", "input"}),
    "window": frozenset({"partition_by", "order_by", "functions", "input"}),
    "distinct": frozenset({"input"}),
    "alias": frozenset({"name", "columns", "input"}),
}
_NAMED_KEYS = frozenset({"expr", "as"})
_WINDOW_FUNCTION_KEYS = frozenset({"expr", "as", "partition_by", "frame"})
_SORT_KEY_KEYS = frozenset({"expr", "desc", "nulls_first"})
_FRAME_KEYS = frozenset({"kind", "start", "end"})
_INDEX_KEYS = frozenset({"name", "columns", "predicates"})
_COL_KEYS = frozenset({"col"})
_LIT_KEYS = frozenset({"lit", "type"})
_SUBQUERY_KEYS = frozenset({"subquery", "kind", "args"})
_CALL_KEYS = frozenset({"fn", "args", "distinct"})
_CAST_KEYS = _CALL_KEYS | {"type"}
_UDF_KEYS = _CALL_KEYS | {"name", "cost", "deterministic"}
_FRAME_KINDS = ("rows", "range")

#: Deepest nesting of nodes and expressions accepted; deeper input is refused, not crashed on.
MAX_DEPTH = 1000

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
class _Binder:
    catalog: Catalog
    taken_ids: set[str]
    next_cid: int = 0
    next_id: int = 0
    outer: list[tuple[Field, ...]] = field(default_factory=list)
    outer_hits: list[set[int]] = field(default_factory=list)

    # -------------------------------------------------------------- helpers

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
            args = tuple(self.expr(a, scope, f"{path}.args[{i}]", depth + 1) for i, a in enumerate(args_raw))
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
                det = raw.get("deterministic", True)
                if not isinstance(det, bool):
                    raise PlanError(
                        "invalid_expression", "deterministic must be true or false", f"{path}.deterministic"
                    )
                return Call("udf", args, name=name, cost=None if cost is None else float(cost), deterministic=det)
            if fn in ("and", "or") and len(args) == 1:
                return args[0]
            if fn == "<>":
                fn = "!="
            distinct = raw.get("distinct", False)
            if not isinstance(distinct, bool):
                raise PlanError("invalid_expression", "distinct must be true or false", f"{path}.distinct")
            return Call(fn, args, distinct=distinct)
        raise PlanError(
            "invalid_expression",
            "an expression needs one of col, lit, fn, subquery",
            path,
            {"keys": sorted(raw)},
        )

    def subquery(self, raw: dict[str, Any], scope: tuple[Field, ...], path: str, depth: int) -> Expr:
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
        keys: frozenset[str] = _NAMED_KEYS,
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
        if depth > MAX_DEPTH:
            raise PlanError("too_deep", f"plan nests deeper than {MAX_DEPTH} levels", path)
        if not isinstance(raw, dict):
            raise PlanError("invalid_node", "a plan node must be an object", path)
        op = raw.get("op")
        if op not in NODE_OPS:
            raise PlanError("unknown_op", f"unknown op {op!r}", f"{path}.op", {"known": list(NODE_OPS)})
        check_keys(raw, NODE_KEYS[op] | {"op", "id"}, path)
        nid = self.node_id(raw, path)
        reader: Callable[[dict[str, Any], str, int, str], Node] = getattr(self, f"_{op}", self._setop)
        return reader(raw, path, depth, nid)

    def _scan(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        table = raw.get("table")
        if not isinstance(table, str) or not table:
            raise PlanError("missing_field", "scan needs a table name", f"{path}.table")
        alias = raw.get("alias")
        if alias is not None and not isinstance(alias, str):
            raise PlanError("invalid_node", "alias must be a string", f"{path}.alias")
        info = self.catalog.table(table)
        qualifier = alias or table
        given = raw.get("columns")
        if given is not None and (not isinstance(given, list) or not all(isinstance(c, str) for c in given)):
            raise PlanError("invalid_node", "columns must be a list of column names", f"{path}.columns")
        columns = tuple(given) if given is not None else None
        if info is not None and info.columns:
            fields = tuple(Field(self.cid(), c.name, qualifier, c.type) for c in info.columns)
        elif columns is not None:
            fields = tuple(Field(self.cid(), c, qualifier) for c in columns)
        else:
            raise PlanError(
                "unknown_table",
                f"table {table!r} is not in the catalog",
                f"{path}.table",
                {"table": table, "available": sorted(self.catalog.tables)},
            )
        node_id = nid
        filters = self.expr_list(raw.get("filters"), fields, f"{path}.filters", depth)
        containers = raw.get("containers")
        if containers is not None and (
            not isinstance(containers, list) or not all(isinstance(c, str) for c in containers)
        ):
            raise PlanError("invalid_node", "containers must be a list of container ids", f"{path}.containers")
        index = self.index(raw.get("index"), fields, f"{path}.index", depth)
        kept = tuple(containers) if containers is not None else None
        return Scan(node_id, table, alias, filters, fields, index, kept, columns)

    def index(self, raw: Any, fields: tuple[Field, ...], path: str, depth: int) -> IndexLookup | None:
        """A scan through an index, as the engine writes it back: ``{"name", "columns", "predicates"}``."""
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise PlanError("invalid_node", 'an index is {"name", "columns", "predicates"}', path)
        check_keys(raw, _INDEX_KEYS, path)
        name, columns = raw.get("name"), raw.get("columns")
        if not isinstance(name, str) or not name:
            raise PlanError("missing_field", "an index needs a name", f"{path}.name")
        if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
            raise PlanError("invalid_node", "index columns must be a non-empty list of names", f"{path}.columns")
        predicates = self.expr_list(raw.get("predicates"), fields, f"{path}.predicates", depth)
        return IndexLookup(name, tuple(columns), predicates)

    def _filter(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        child = self.child(raw, "input", path, depth)
        if "predicate" not in raw:
            raise PlanError("missing_field", "filter needs a predicate", f"{path}.predicate")
        pred = self.expr(raw["predicate"], output_fields(child), f"{path}.predicate", depth + 1)
        return Filter(nid, pred, child)

    def _project(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        child = self.child(raw, "input", path, depth)
        exprs = raw.get("exprs")
        if not isinstance(exprs, list) or not exprs:
            raise PlanError("missing_field", "project needs a non-empty exprs list", f"{path}.exprs")
        scope = output_fields(child)
        named = tuple(self.named(e, scope, f"{path}.exprs[{i}]", depth, i) for i, e in enumerate(exprs))
        return Project(nid, named, child)

    def _aggregate(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        child = self.child(raw, "input", path, depth)
        scope = output_fields(child)
        group_raw = raw.get("group_by") or []
        aggs_raw = raw.get("aggregates") or []
        if not isinstance(group_raw, list) or not isinstance(aggs_raw, list):
            raise PlanError("invalid_node", "group_by and aggregates must be lists", path)
        keys = []
        for i, item in enumerate(group_raw):
            item = item if isinstance(item, dict) and "expr" in item else {"expr": item}
            keys.append(self.named(item, scope, f"{path}.group_by[{i}]", depth, i))
        aggs = tuple(
            self.named(a, scope, f"{path}.aggregates[{i}]", depth, len(keys) + i) for i, a in enumerate(aggs_raw)
        )
        return Aggregate(nid, tuple(keys), aggs, child, self._grouping_sets(raw, len(keys), path))

    @staticmethod
    def _grouping_sets(raw: dict[str, Any], n_keys: int, path: str) -> tuple[tuple[int, ...], ...] | None:
        """``grouping_sets``: a list of sets, each a list of indexes into ``group_by``."""
        sets = raw.get("grouping_sets")
        if sets is None:
            return None
        if not isinstance(sets, list) or not sets:
            raise PlanError("invalid_node", "grouping_sets must be a non-empty list of lists", f"{path}.grouping_sets")
        out = []
        for i, grouping in enumerate(sets):
            ok = isinstance(grouping, list) and all(
                isinstance(k, int) and not isinstance(k, bool) and 0 <= k < n_keys for k in grouping
            )
            if not ok:
                raise PlanError(
                    "invalid_node",
                    f"a grouping set lists indexes into group_by (0 to {n_keys - 1})",
                    f"{path}.grouping_sets[{i}]",
                )
            out.append(tuple(sorted(set(grouping))))
        return tuple(out)

    def _join(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        left = self.child(raw, "left", path, depth)
        right = self.child(raw, "right", path, depth)
        jtype = str(raw.get("type", "inner")).lower()
        if jtype not in JOIN_TYPES:
            raise PlanError("invalid_node", f"unknown join type {jtype!r}", f"{path}.type", {"known": list(JOIN_TYPES)})
        on_raw = raw.get("on")
        on = None
        if on_raw is not None:
            on = self.expr(on_raw, output_fields(left) + output_fields(right), f"{path}.on", depth + 1)
        null_aware = raw.get("null_aware", False)
        if not isinstance(null_aware, bool):
            raise PlanError("invalid_node", "null_aware must be true or false", f"{path}.null_aware")
        return Join(nid, jtype, on, left, right, null_aware)

    def _setop(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        inputs_raw = raw.get("inputs")
        if not isinstance(inputs_raw, list) or len(inputs_raw) < 2:
            raise PlanError("missing_field", f"{raw['op']} needs at least two inputs", f"{path}.inputs")
        inputs = tuple(self.node(item, f"{path}.inputs[{i}]", depth + 1) for i, item in enumerate(inputs_raw))
        first = output_fields(inputs[0])
        for i, branch in enumerate(inputs[1:], start=1):
            if len(output_fields(branch)) != len(first):
                raise PlanError(
                    "column_count_mismatch",
                    f"input {i} has {len(output_fields(branch))} columns, input 0 has {len(first)}",
                    f"{path}.inputs[{i}]",
                )
        fields = tuple(Field(self.cid(), f.name, None, f.type) for f in first)
        all_rows = raw.get("all", False)
        if not isinstance(all_rows, bool):
            raise PlanError("invalid_node", "all must be true or false", f"{path}.all")
        return SetOp(nid, raw["op"], all_rows, inputs, fields)

    def _sort(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        child = self.child(raw, "input", path, depth)
        keys = self.sort_keys(raw.get("keys", []), output_fields(child), f"{path}.keys", depth)
        limit = raw.get("limit")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise PlanError("invalid_node", "limit must be a non-negative integer", f"{path}.limit")
        return Sort(nid, keys, child, limit)

    def _limit(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        child = self.child(raw, "input", path, depth)
        count = raw.get("count")
        offset = raw.get("offset", 0) or 0
        for key, value in (("count", count), ("offset", offset)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise PlanError("invalid_node", f"{key} must be a non-negative integer", f"{path}.{key}")
        return Limit(nid, count, offset, child)

    def _window(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        child = self.child(raw, "input", path, depth)
        scope = output_fields(child)
        partition = self.expr_list(raw.get("partition_by"), scope, f"{path}.partition_by", depth)
        order = self.sort_keys(raw.get("order_by") or [], scope, f"{path}.order_by", depth)
        funcs_raw = raw.get("functions")
        if not isinstance(funcs_raw, list) or not funcs_raw:
            raise PlanError("missing_field", "window needs a non-empty functions list", f"{path}.functions")
        funcs = []
        for i, item in enumerate(funcs_raw):
            fpath = f"{path}.functions[{i}]"
            named = self.named(item, scope, fpath, depth, len(scope) + i, _WINDOW_FUNCTION_KEYS)
            cid = self.cid() if named.cid in {f.cid for f in scope} else named.cid
            own = item.get("partition_by")
            part = self.expr_list(own, scope, f"{fpath}.partition_by", depth) if own is not None else None
            frame = _frame(item.get("frame"), f"{fpath}.frame")
            funcs.append(NamedExpr(named.expr, named.name, cid, None, part, frame))
        return Window(nid, partition, order, tuple(funcs), child)

    def _distinct(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        child = self.child(raw, "input", path, depth)
        return Distinct(nid, child)

    def _alias(self, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
        child = self.child(raw, "input", path, depth)
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise PlanError("missing_field", "alias needs a name", f"{path}.name")
        inner = output_fields(child)
        names_raw = raw.get("columns")
        names: tuple[str, ...] | None = None
        if names_raw is not None:
            if not isinstance(names_raw, list) or len(names_raw) != len(inner):
                raise PlanError(
                    "column_count_mismatch",
                    f"alias names {len(names_raw) if isinstance(names_raw, list) else '?'} columns,"
                    f" input has {len(inner)}",
                    f"{path}.columns",
                )
            names = tuple(str(n) for n in names_raw)
        fields = tuple(Field(f.cid, names[i] if names else f.name, name, f.type) for i, f in enumerate(inner))
        return Alias(nid, name, child, fields, names)


def _frame_bound(raw: Any, path: str) -> str:
    """``unbounded preceding``, ``N preceding``, ``current row``, ``N following`` or ``unbounded following``."""
    words = raw.lower().split() if isinstance(raw, str) else []
    if words == ["current", "row"]:
        return "current row"
    if len(words) == 2 and words[1] in ("preceding", "following") and (words[0] == "unbounded" or words[0].isdigit()):
        return f"{words[0] if words[0] == 'unbounded' else int(words[0])} {words[1]}"
    raise PlanError(
        "invalid_node",
        "a frame bound is 'unbounded preceding', 'N preceding', 'current row', 'N following' or 'unbounded following'",
        path,
    )


def _frame(raw: Any, path: str) -> WindowFrame | None:
    """A window function's frame ``{"kind", "start", "end"}``; absent bounds take SQL's defaults."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise PlanError("invalid_node", 'a frame is {"kind", "start", "end"}', path)
    check_keys(raw, _FRAME_KEYS, path)
    kind = raw.get("kind", "rows")
    if not isinstance(kind, str) or kind.lower() not in _FRAME_KINDS:
        raise PlanError("invalid_node", "frame kind must be rows or range", f"{path}.kind")
    start = _frame_bound(raw.get("start", "unbounded preceding"), f"{path}.start")
    end = _frame_bound(raw.get("end", "current row"), f"{path}.end")
    return WindowFrame(kind.lower(), start, end)


def _collect_ids(raw: Any) -> set[str]:
    """Ids the caller gave, found without recursion; duplicates are refused."""
    seen: set[str] = set()
    stack: list[tuple[Any, str]] = [(raw, "$.plan")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            if "op" in item and isinstance(item.get("id"), (str, int)) and not isinstance(item.get("id"), bool):
                node_id = str(item["id"])
                if node_id in seen:
                    raise PlanError("duplicate_id", f"node id {node_id!r} is used twice", f"{path}.id")
                seen.add(node_id)
            for key, value in item.items():
                if isinstance(value, (dict, list)):
                    stack.append((value, f"{path}.{key}"))
        elif isinstance(item, list):
            for i, value in enumerate(item):
                if isinstance(value, (dict, list)):
                    stack.append((value, f"{path}[{i}]"))
    return seen


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


def plan_from_wire(raw: Any, catalog: Catalog, path: str = "$.plan") -> Node:
    """Read and bind a wire plan; raises ``PlanError`` with the JSON path of the fault."""
    if json_depth(raw) > 3 * MAX_DEPTH:
        raise PlanError("too_deep", f"plan nests deeper than {MAX_DEPTH} levels", path)
    binder = _Binder(catalog, _collect_ids(raw))
    return binder.node(raw, path, 0)


# ------------------------------------------------------------------ writing


class _Namer:
    """Spells a column so that it resolves to the same cid in the scope it lands in."""

    def __init__(self, scope: tuple[Field, ...]):
        self.scope = scope
        self._by_name: dict[str, set[int]] | None = None

    def _index(self) -> dict[str, set[int]]:
        if self._by_name is None:
            index: dict[str, set[int]] = {}
            for f in self.scope:
                index.setdefault(f.name.lower(), set()).add(f.cid)
                if f.qualifier:
                    index.setdefault(f"{f.qualifier}.{f.name}".lower(), set()).add(f.cid)
            self._by_name = index
        return self._by_name

    def __call__(self, col: Column) -> str:
        index = self._index()
        if index.get(col.name.lower()) == {col.cid}:
            return col.name
        for f in self.scope:
            if f.cid == col.cid:
                return f"{f.qualifier}.{f.name}" if f.qualifier else f.name
        return col.name  # an outer (correlated) reference keeps its spelling


def expr_to_wire(expr: Expr, namer: Callable[[Column], str]) -> dict[str, Any]:
    if isinstance(expr, Column):
        return {"col": namer(expr)}
    if isinstance(expr, Literal):
        return {"lit": expr.value, "type": expr.type}
    if isinstance(expr, Subquery):
        out: dict[str, Any] = {"subquery": plan_to_wire(expr.plan), "kind": expr.kind}
        if expr.args:
            out["args"] = [expr_to_wire(a, namer) for a in expr.args]
        return out
    out = {"fn": expr.fn, "args": [expr_to_wire(a, namer) for a in expr.args]}
    if expr.distinct:
        out["distinct"] = True
    if expr.fn == "cast":
        out["type"] = expr.type
    if expr.fn == "udf":
        out["name"] = expr.name
        if expr.cost is not None:
            out["cost"] = expr.cost
        out["deterministic"] = expr.deterministic
    return out


def _named_to_wire(named: NamedExpr, namer: _Namer) -> dict[str, Any]:
    return {"expr": expr_to_wire(named.expr, namer), "as": named.name}


def _keys_to_wire(keys: tuple[SortKey, ...], namer: _Namer) -> list[dict[str, Any]]:
    out = []
    for key in keys:
        item: dict[str, Any] = {"expr": expr_to_wire(key.expr, namer), "desc": key.desc}
        if key.nulls_first is not None:
            item["nulls_first"] = key.nulls_first
        out.append(item)
    return out


def plan_to_wire(node: Node) -> dict[str, Any]:
    """Write a plan in the wire format; columns are spelled to resolve where they stand."""
    if isinstance(node, Scan):
        namer = _Namer(node.fields)
        out: dict[str, Any] = {"op": "scan", "id": node.id, "table": node.table}
        if node.alias:
            out["alias"] = node.alias
        out["filters"] = [expr_to_wire(f, namer) for f in node.filters]
        if node.index is not None:
            out["index"] = _index_to_wire(node.index, namer)
        if node.containers is not None:
            out["containers"] = list(node.containers)
        if node.columns is not None:
            out["columns"] = list(node.columns)
        return out
    kids = children(node)
    scope: tuple[Field, ...] = ()
    for kid in kids[:2] if isinstance(node, Join) else kids[:1]:
        scope = scope + output_fields(kid)
    namer = _Namer(scope)
    if isinstance(node, Filter):
        return {
            "op": "filter",
            "id": node.id,
            "predicate": expr_to_wire(node.predicate, namer),
            "input": plan_to_wire(node.input),
        }
    if isinstance(node, Project):
        return {
            "op": "project",
            "id": node.id,
            "exprs": [_named_to_wire(e, namer) for e in node.exprs],
            "input": plan_to_wire(node.input),
        }
    if isinstance(node, Aggregate):
        return {
            "op": "aggregate",
            "id": node.id,
            "group_by": [
                expr_to_wire(k.expr, namer)
                if isinstance(k.expr, Column) and k.cid == k.expr.cid
                else _named_to_wire(k, namer)
                for k in node.group_by
            ],
            "aggregates": [_named_to_wire(a, namer) for a in node.aggregates],
            **({"grouping_sets": [list(g) for g in node.grouping_sets]} if node.grouping_sets is not None else {}),
            "input": plan_to_wire(node.input),
        }
    if isinstance(node, Join):
        out = {
            "op": "join",
            "id": node.id,
            "type": node.type,
            "on": expr_to_wire(node.on, namer) if node.on is not None else None,
        }
        if node.null_aware:
            out["null_aware"] = True
        out["left"] = plan_to_wire(node.left)
        out["right"] = plan_to_wire(node.right)
        return out
    if isinstance(node, SetOp):
        return {"op": node.op, "id": node.id, "all": node.all, "inputs": [plan_to_wire(i) for i in node.inputs]}
    if isinstance(node, Sort):
        out = {"op": "sort", "id": node.id, "keys": _keys_to_wire(node.keys, namer)}
        if node.limit is not None:
            out["limit"] = node.limit
        out["input"] = plan_to_wire(node.input)
        return out
    if isinstance(node, Limit):
        return {
            "op": "limit",
            "id": node.id,
            "count": node.count,
            "offset": node.offset,
            "input": plan_to_wire(node.input),
        }
    if isinstance(node, Window):
        functions = []
        for f in node.functions:
            item = _named_to_wire(f, namer)
            if f.partition_by is not None:
                item["partition_by"] = [expr_to_wire(e, namer) for e in f.partition_by]
            if f.frame is not None:
                item["frame"] = {"kind": f.frame.kind, "start": f.frame.start, "end": f.frame.end}
            functions.append(item)
        return {
            "op": "window",
            "id": node.id,
            "partition_by": [expr_to_wire(e, namer) for e in node.partition_by],
            "order_by": _keys_to_wire(node.order_by, namer),
            "functions": functions,
            "input": plan_to_wire(node.input),
        }
    if isinstance(node, Distinct):
        return {"op": "distinct", "id": node.id, "input": plan_to_wire(node.input)}
    if isinstance(node, Alias):
        out = {"op": "alias", "id": node.id, "name": node.name}
        if node.column_names:
            out["columns"] = list(node.column_names)
        out["input"] = plan_to_wire(node.input)
        return out
    raise TypeError(f"unknown node {node!r}")


def _index_to_wire(index: IndexLookup, namer: _Namer) -> dict[str, Any]:
    return {
        "name": index.index,
        "columns": list(index.columns),
        "predicates": [expr_to_wire(p, namer) for p in index.predicates],
    }
