"""Wire plan -> Substrait plan JSON.

The rewritten wire plan is bound with the engine's own binder, so every
column reference resolves to a column id exactly as the optimizer saw it;
positions in each relation's output are then computed from those ids. The
original document is read again to reuse its function declarations, table
schemas, type spellings, measure output types and grouping encoding.
"""

from __future__ import annotations

import copy
from typing import Any, assert_never

from costmodel import PlanError, catalog_from_wire, plan_from_wire
from costmodel.expr import Call, Column, Expr, Literal, Subquery
from costmodel.plan import (
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
    output_fields,
)
from service.substrait.common import (
    BOOLEAN_FNS,
    JOIN_TYPES,
    SET_OPS,
    SORT_DIRECTIONS,
    WIRE_TO_SUBSTRAIT_FN,
    SubstraitError,
    date_days,
    decimal_literal,
    substrait_type,
    unsupported,
)
from service.substrait.to_plan import Reader, read_substrait

_JOIN_OUT = {v: k for k, v in reversed(list(JOIN_TYPES.items()))}
_SET_OUT = {v: k for k, v in SET_OPS.items()}
_SORT_OUT = {v: k for k, v in SORT_DIRECTIONS.items()}
_BOOL = {"bool": {"nullability": "NULLABILITY_NULLABLE"}}


class Writer:
    """Writes one bound plan; ``outer`` holds the column ids of enclosing queries (for outer references)."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.anchors: dict[str, int] = {}
        for decl in reader.declarations:
            self.anchors.setdefault(str(decl.get("name", "")).split(":")[0].lower(), int(decl.get("functionAnchor", 0)))
        self.template = {
            k: v
            for k, v in (reader.declarations[0] if reader.declarations else {}).items()
            if k in ("extensionUriReference", "extensionUrnReference")
        }
        self.new_declarations: list[dict[str, Any]] = []
        self.outer: list[list[int]] = []

    def anchor(self, name: str) -> int:
        if name not in self.anchors:
            anchor = max([*self.anchors.values(), *self.reader.functions, -1]) + 1
            self.anchors[name] = anchor
            decl = {**self.template, "functionAnchor": anchor, "name": name}
            self.new_declarations.append({"extensionFunction": decl})
        return self.anchors[name]

    # ------------------------------------------------------------ relations

    def rel(self, node: Node, path: str) -> tuple[dict[str, Any], list[int]]:
        """``node`` as a Substrait relation and its output cids: exhaustive over the node union (mypy names a new
        kind here); a kind Substrait has no standard relation for is refused by name."""
        match node:
            case Alias():
                return self.rel(node.input, f"{path}.input")
            case Scan():
                return self._scan(node, path)
            case Filter():
                child, cids = self.rel(node.input, f"{path}.input")
                cond = self.expr(node.predicate, cids, f"{path}.predicate")
                return {"filter": {"input": child, "condition": cond}}, cids
            case Project():
                child, cids = self.rel(node.input, f"{path}.input")
                exprs = [self.expr(e.expr, cids, f"{path}.exprs[{i}].expr") for i, e in enumerate(node.exprs)]
                body = {
                    "common": {"emit": {"outputMapping": [len(cids) + i for i in range(len(exprs))]}},
                    "input": child,
                    "expressions": exprs,
                }
                return {"project": body}, [e.cid for e in node.exprs]
            case Aggregate():
                return self._aggregate(node, path)
            case Distinct():
                child, cids = self.rel(node.input, f"{path}.input")
                keys = [_field(i) for i in range(len(cids))]
                return {"aggregate": self._grouped({"input": child}, keys)}, cids
            case Join():
                return self._join(node, path)
            case SetOp():
                inputs = [self.rel(child, f"{path}.inputs[{i}]")[0] for i, child in enumerate(node.inputs)]
                op = _SET_OUT.get((node.op, node.all))
                if op is None:
                    raise unsupported(f"{node.op} {'all' if node.all else 'distinct'}", path)
                return {"set": {"inputs": inputs, "op": op}}, [f.cid for f in node.fields]
            case Sort():
                return self._sort(node, path)
            case Limit():
                child, cids = self.rel(node.input, f"{path}.input")
                body = {"input": child}
                if node.offset:
                    body["offsetExpr"] = {"literal": {"i64": str(node.offset)}}
                if node.count is not None:
                    body["countExpr"] = {"literal": {"i64": str(node.count)}}
                return {"fetch": body}, cids
            case Window():
                raise unsupported("window", path, "the Substrait writer does not emit window functions")
            case Generate():
                raise unsupported("generate", path, "Substrait has no standard relation for a generator")
            case Sample():
                raise unsupported("sample", path, "Substrait has no standard sample relation")
            case _:
                assert_never(node)

    def _sort(self, node: Sort, path: str) -> tuple[dict[str, Any], list[int]]:
        child, cids = self.rel(node.input, f"{path}.input")
        sorts = []
        for i, key in enumerate(node.keys):
            nulls_first = key.desc if key.nulls_first is None else key.nulls_first
            sorts.append(
                {
                    "expr": self.expr(key.expr, cids, f"{path}.keys[{i}].expr"),
                    "direction": _SORT_OUT[(key.desc, nulls_first)],
                }
            )
        out: dict[str, Any] = {"sort": {"input": child, "sorts": sorts}}
        if node.limit is not None:
            out = {"fetch": {"input": out, "countExpr": {"literal": {"i64": str(node.limit)}}}}
        return out, cids

    def _scan(self, node: Scan, path: str) -> tuple[dict[str, Any], list[int]]:
        origin = self.reader.origin.get(node.id)
        if origin is None or origin[0] != "read":
            raise SubstraitError("invalid_plan", f"scan {node.id!r} is not a read of the original plan", f"{path}.id")
        body = {k: copy.deepcopy(v) for k, v in origin[1].items() if k in ("baseSchema", "namedTable")}
        by_name = {f.name.lower(): f.cid for f in node.fields}
        cids = [by_name[str(n).lower()] for n in body["baseSchema"]["names"]]
        predicates = list(node.filters) + (list(node.index.predicates) if node.index is not None else [])
        if not predicates:
            return {"read": body}, cids
        # A FilterRel over the read, not ReadRel.filter: DataFusion's consumer hands ReadRel.filter to the
        # table provider as a pruning hint, which may let rows through.
        cond = predicates[0] if len(predicates) == 1 else Call("and", tuple(predicates))
        return {"filter": {"input": {"read": body}, "condition": self.expr(cond, cids, f"{path}.filters")}}, cids

    def _grouped(self, body: dict[str, Any], keys: list[dict[str, Any]]) -> dict[str, Any]:
        body["groupings"] = [{"expressionReferences": list(range(len(keys)))}] if keys else []
        if keys and self.reader.deprecated_groupings:
            body["groupings"][0]["groupingExpressions"] = copy.deepcopy(keys)
        body["groupingExpressions"] = keys
        return body

    def _aggregate(self, node: Aggregate, path: str) -> tuple[dict[str, Any], list[int]]:
        child, cids = self.rel(node.input, f"{path}.input")
        keys = [self.expr(k.expr, cids, f"{path}.group_by[{i}]") for i, k in enumerate(node.group_by)]
        origin = self.reader.origin.get(node.id)
        original = origin[1].get("measures", []) if origin and origin[0] == "aggregate" else []
        measures = []
        for i, agg in enumerate(node.aggregates):
            apath = f"{path}.aggregates[{i}].expr"
            call = agg.expr
            if not isinstance(call, Call):
                raise unsupported("an aggregate entry that is not a function call", apath)
            measure: dict[str, Any] = {
                "functionReference": self.anchor(call.fn),
                "arguments": [{"value": self.expr(a, cids, f"{apath}.args[{j}]")} for j, a in enumerate(call.args)],
                "invocation": "AGGREGATION_INVOCATION_DISTINCT" if call.distinct else "AGGREGATION_INVOCATION_ALL",
            }
            if i < len(original) and len(original) == len(node.aggregates):
                old = original[i].get("measure", {})
                if self.reader.functions.get(int(old.get("functionReference", 0)), "").lower() == call.fn:
                    measure.update({k: old[k] for k in ("phase", "outputType") if k in old})
            measures.append({"measure": measure})
        body = self._grouped({"input": child}, keys)
        body["measures"] = measures
        return {"aggregate": body}, [k.cid for k in node.group_by] + [a.cid for a in node.aggregates]

    def _join(self, node: Join, path: str) -> tuple[dict[str, Any], list[int]]:
        left, lcids = self.rel(node.left, f"{path}.left")
        right, rcids = self.rel(node.right, f"{path}.right")
        if node.null_aware:
            raise unsupported("null-aware anti join", path, "Substrait's anti join is not null-aware")
        out_cids = lcids if node.type in ("semi", "anti") else lcids + rcids
        if node.type == "cross" and node.on is None:
            return {"cross": {"left": left, "right": right}}, out_cids
        jtype = "inner" if node.type == "cross" else node.type
        cond = (
            self.expr(node.on, lcids + rcids, f"{path}.on") if node.on is not None else {"literal": {"boolean": True}}
        )
        return {"join": {"left": left, "right": right, "expression": cond, "type": _JOIN_OUT[jtype]}}, out_cids

    # ------------------------------------------------------------ expressions

    def expr(self, e: Expr, cids: list[int], path: str) -> dict[str, Any]:
        if isinstance(e, Column):
            return self._column(e, cids, path)
        if isinstance(e, Literal):
            return {"literal": self.literal(e, path)}
        if isinstance(e, Subquery):
            return self._subquery(e, cids, path)
        if not isinstance(e, Call):
            raise SubstraitError("invalid_plan", f"unknown expression {type(e).__name__}", path)
        args = [self.expr(a, cids, f"{path}.args[{i}]") for i, a in enumerate(e.args)]
        if e.fn == "cast":
            return {
                "cast": {
                    "type": substrait_type(e.type or "", self.reader.types, f"{path}.type"),
                    "input": args[0],
                    "failureBehavior": "FAILURE_BEHAVIOR_THROW_EXCEPTION",
                }
            }
        if e.fn == "case":
            ifs = [{"if": args[i], "then": args[i + 1]} for i in range(0, len(args) - 1, 2)]
            out: dict[str, Any] = {"ifs": ifs}
            if len(args) % 2:
                out["else"] = args[-1]
            return {"ifThen": out}
        if e.fn == "in":
            return {"singularOrList": {"value": args[0], "options": args[1:]}}
        if e.fn == "between":
            return self._call("and", [self._call("gte", args[:2]), self._call("lte", [args[0], args[2]])])
        if e.fn == "udf" or e.distinct:
            raise unsupported(f"function {e.name or e.fn}", path, "it has no Substrait spelling here")
        return self._call(WIRE_TO_SUBSTRAIT_FN.get(e.fn, e.fn), args, boolean=e.fn in BOOLEAN_FNS)

    def _call(self, name: str, args: list[dict[str, Any]], boolean: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {"functionReference": self.anchor(name), "arguments": [{"value": a} for a in args]}
        if boolean:
            body["outputType"] = _BOOL
        return {"scalarFunction": body}

    def _column(self, col: Column, cids: list[int], path: str) -> dict[str, Any]:
        if col.cid in cids:
            return _field(cids.index(col.cid))
        for steps, scope in enumerate(reversed(self.outer), start=1):
            if col.cid in scope:
                return {
                    "selection": {
                        "directReference": {"structField": {"field": scope.index(col.cid)}},
                        "outerReference": {"stepsOut": steps},
                    }
                }
        raise SubstraitError("invalid_plan", f"column {col.name!r} is not in scope", path)

    def literal(self, lit: Literal, path: str) -> dict[str, Any]:
        typ = (lit.type or "").lower().replace(" ", "")
        value = lit.value
        if value is None:
            return {
                "null": substrait_type(
                    typ if typ not in ("null", "unknown") else "string", self.reader.null_types, path
                )
            }
        if isinstance(value, bool) or typ == "boolean":
            return {"boolean": bool(value)}
        if typ in ("int", "integer", "tinyint", "smallint"):
            kind = {"tinyint": "i8", "smallint": "i16"}.get(typ, "i32")
            return {kind: int(value)}
        if typ in ("bigint", "long"):
            return {"i64": str(int(value))}
        if typ in ("double", "float", "real"):
            return {"fp64" if typ == "double" else "fp32": float(value)}
        if typ.startswith(("decimal(", "numeric(")):
            precision, scale = (int(x) for x in typ[typ.index("(") + 1 : -1].split(","))
            return decimal_literal(value, precision, scale)
        if typ == "date":
            return {"date": date_days(str(value), path)}
        if typ in ("string", "varchar", "text") or typ.startswith(("varchar(", "char(")):
            return {"string": str(value)}
        if isinstance(value, int):
            return {"i32": value} if -(2**31) <= value < 2**31 else {"i64": str(value)}
        if isinstance(value, float):
            return {"fp64": value}
        if isinstance(value, str) and typ in ("", "unknown"):
            return {"string": value}
        raise unsupported(f"a {typ} literal", path, "the Substrait writer has no spelling for it")

    def _subquery(self, sub: Subquery, cids: list[int], path: str) -> dict[str, Any]:
        self.outer.append(cids)
        try:
            plan, _ = self.rel(sub.plan, f"{path}.subquery")
        finally:
            self.outer.pop()
        if sub.kind == "scalar":
            return {"subquery": {"scalar": {"input": plan}}}
        if sub.kind == "exists":
            return {"subquery": {"setPredicate": {"predicateOp": "PREDICATE_OP_EXISTS", "tuples": plan}}}
        needle = self.expr(sub.args[0], cids, f"{path}.args[0]")
        return {"subquery": {"inPredicate": {"needles": [needle], "haystack": plan}}}


def _field(index: int) -> dict[str, Any]:
    return {"selection": {"directReference": {"structField": {"field": index}}, "rootReference": {}}}


def _catalog(reader: Reader, plan: Any) -> dict[str, Any]:
    """A catalog of the tables the plan scans, from the original reads (their columns, in schema order)."""
    tables: dict[str, Any] = {}
    stack = [plan]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("op") == "scan" and isinstance(item.get("table"), str):
                origin = reader.origin.get(str(item.get("id")))
                if origin is not None and origin[0] == "read":
                    names = origin[1].get("baseSchema", {}).get("names", [])
                    tables.setdefault(item["table"], {"columns": [{"name": str(n)} for n in names]})
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(item)
    return {"tables": tables}


def plan_to_substrait(plan: dict[str, Any], original: dict[str, Any], path: str = "$.plan") -> dict[str, Any]:
    """The (rewritten) wire plan as Substrait JSON, reusing ``original``'s declarations and schemas.

    ``plan`` must come from ``substrait_to_plan(original, ...)``, optimized or not: scans are matched
    to the original's reads by node id. Raises ``SubstraitError``.
    """
    reader, _ = read_substrait(original, None)
    try:
        bound = plan_from_wire(plan, catalog_from_wire(_catalog(reader, plan)), path)
    except PlanError as exc:
        raise SubstraitError("invalid_plan", exc.message, exc.path, exc.detail) from exc
    writer = Writer(reader)
    rel, cids = writer.rel(bound, path)
    names = reader.root_names
    if names and len(names) != len(output_fields(bound)):
        raise SubstraitError(
            "invalid_plan", f"the plan has {len(cids)} output columns, the original {len(names)}", path
        )
    relation = {"root": {"input": rel, "names": names}} if names else {"rel": rel}
    out = {k: copy.deepcopy(v) for k, v in reader.doc.items() if k not in ("relations", "extensions")}
    extensions = copy.deepcopy(reader.doc.get("extensions", [])) + writer.new_declarations
    if extensions:
        out["extensions"] = extensions
    out["relations"] = [relation]
    return out
