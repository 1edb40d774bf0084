"""Substrait plan JSON -> wire plan.

Substrait refers to columns by position in each relation's output; the wire
plan refers to them by name. The reader therefore tracks, for every relation,
the wire name of each output position: ``qualifier.column`` for table columns
(every scan gets a qualifier of its own, so self-joins stay unambiguous) and
a fresh ``_sN`` name for every computed column. Anything it does not model is
refused with the JSON path of the construct, never dropped.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from service.substrait.common import (
    SUBSTRAIT_TO_WIRE_FN,
    SubstraitError,
    add_months,
    check_keys,
    date_text,
    decimal_text,
    unsupported,
    validate,
    wire_type,
)

JOIN_TYPES: dict[str, str] = {
    "JOIN_TYPE_INNER": "inner",
    "JOIN_TYPE_OUTER": "full",
    "JOIN_TYPE_LEFT": "left",
    "JOIN_TYPE_RIGHT": "right",
    "JOIN_TYPE_LEFT_SEMI": "semi",
    "JOIN_TYPE_LEFT_ANTI": "anti",
    "JOIN_TYPE_RIGHT_SEMI": "semi",
    "JOIN_TYPE_RIGHT_ANTI": "anti",
}
SET_OPS: dict[str, tuple[str, bool]] = {
    "SET_OP_UNION_ALL": ("union", True),
    "SET_OP_UNION_DISTINCT": ("union", False),
    "SET_OP_MINUS_PRIMARY": ("except", False),
    "SET_OP_MINUS_PRIMARY_ALL": ("except", True),
    "SET_OP_INTERSECTION_MULTISET": ("intersect", False),
    "SET_OP_INTERSECTION_MULTISET_ALL": ("intersect", True),
}
SORT_DIRECTIONS: dict[str, tuple[bool, bool]] = {
    "SORT_DIRECTION_ASC_NULLS_FIRST": (False, True),
    "SORT_DIRECTION_ASC_NULLS_LAST": (False, False),
    "SORT_DIRECTION_DESC_NULLS_FIRST": (True, True),
    "SORT_DIRECTION_DESC_NULLS_LAST": (True, False),
}
_TOP_LEVEL = frozenset({"version", "extensionUris", "extensionUrns", "extensions", "relations", "expectedTypeUrls"})
_INTERVALS = ("intervalCompound", "intervalYearToMonth", "intervalDayToSecond")


def _single(obj: Any, path: str, what: str) -> tuple[str, Any]:
    if not isinstance(obj, dict) or len(obj) != 1:
        raise SubstraitError("invalid_substrait", f"{what} must have exactly one kind", path)
    return next(iter(obj.items()))


class Reader:
    """One pass over a validated document; also remembers what the writer reuses (by node id)."""

    def __init__(self, doc: dict[str, Any], catalog: dict[str, Any] | None, root: str) -> None:
        self.doc = doc
        self.root = root
        self.catalog_tables: dict[str, tuple[str, list[str]]] = {}
        tables = (catalog or {}).get("tables") if isinstance(catalog, dict) else None
        if isinstance(tables, dict):
            for name, info in tables.items():
                cols = info.get("columns", []) if isinstance(info, dict) else []
                names = [c["name"] if isinstance(c, dict) else str(c) for c in cols]
                self.catalog_tables[str(name).lower()] = (str(name), names)
        self.functions: dict[int, str] = {}
        self.declarations: list[dict[str, Any]] = []
        #: wire type -> the document's own Substrait spelling of it in casts and typed NULLs (keeps
        #: type variations on the way back)
        self.types: dict[str, dict[str, Any]] = {}
        self.null_types: dict[str, dict[str, Any]] = {}
        #: node id -> the Substrait relation body it came from
        self.origin: dict[str, tuple[str, dict[str, Any]]] = {}
        self.root_names: list[str] = []
        #: the input used the deprecated groupings[].groupingExpressions; the writer answers in kind
        self.deprecated_groupings = False
        self.outer: list[list[str]] = []
        self._qualifiers: set[str] = set()
        self._names: set[str] = set()
        self._next_id = 0
        self._next_name = 0

    # ------------------------------------------------------------ helpers

    def node_id(self) -> str:
        self._next_id += 1
        return f"n{self._next_id}"

    def fresh(self) -> str:
        while True:
            self._next_name += 1
            name = f"_s{self._next_name}"
            if name not in self._names:
                return name

    def qualifier(self, table: str) -> str:
        taken = {q.lower() for q in self._qualifiers} | (set(self.catalog_tables) - {table.lower()})
        candidate, n = table, 1
        while candidate.lower() in taken:
            n += 1
            candidate = f"{table}_{n}"
        self._qualifiers.add(candidate)
        return candidate

    # ------------------------------------------------------------ document

    def plan(self) -> dict[str, Any]:
        doc, root = self.doc, self.root
        for key in doc:
            if key not in _TOP_LEVEL:
                raise unsupported(f"plan.{key}", f"{root}.{key}", "the adapter does not model it")
        for i, ext in enumerate(doc.get("extensions", [])):
            kind, body = _single(ext, f"{root}.extensions[{i}]", "an extension declaration")
            if kind == "extensionFunction":
                self.functions[int(body.get("functionAnchor", 0))] = str(body.get("name", "")).split(":")[0]
                self.declarations.append(body)
        for item in _walk_dicts(doc.get("relations", [])):
            schema = item.get("baseSchema")
            if isinstance(schema, dict):
                self._names.update(str(n) for n in schema.get("names", []))
        relations = doc.get("relations", [])
        if len(relations) != 1:
            raise unsupported("several relations", f"{root}.relations", "a plan must have exactly one relation")
        kind, body = _single(relations[0], f"{root}.relations[0]", "a plan relation")
        path = f"{root}.relations[0].{kind}"
        if kind == "root":
            check_keys(body, {"input", "names"}, path, "root")
            self.root_names = [str(n) for n in body.get("names", [])]
            node, _ = self.rel(body.get("input"), f"{path}.input")
        else:
            node, _ = self.rel(body, path)
        return node

    # ------------------------------------------------------------ relations

    def rel(self, rel: Any, path: str) -> tuple[dict[str, Any], list[str]]:
        kind, body = _single(rel, path, "a relation")
        path = f"{path}.{kind}"
        reader = getattr(self, f"_rel_{kind}", None)
        if reader is None:
            raise unsupported(f"{kind} relation", path, "the wire plan has no node for it")
        if not isinstance(body, dict):
            raise SubstraitError("invalid_substrait", "a relation must be an object", path)
        common = body.get("common", {})
        check_keys(common, {"emit", "direct", "hint"}, f"{path}.common", "common")
        nid = self.node_id()
        node, refs = reader(body, path, nid)
        self.origin[nid] = (kind, body)
        emit = common.get("emit")
        if emit is not None and kind != "project":
            mapping = self._mapping(emit, len(refs), f"{path}.common.emit")
            refs = [refs[i] for i in mapping]
            node = self._passthrough(node, refs)
        return node, refs

    def _mapping(self, emit: dict[str, Any], width: int, path: str) -> list[int]:
        mapping = [int(i) for i in emit.get("outputMapping", [])]
        for i, index in enumerate(mapping):
            if not 0 <= index < width:
                raise SubstraitError(
                    "invalid_reference",
                    f"output mapping {index} is outside the {width} columns",
                    f"{path}.outputMapping[{i}]",
                    {"width": width},
                )
        return mapping

    def _passthrough(self, node: dict[str, Any], refs: list[str]) -> dict[str, Any]:
        exprs = [{"expr": {"col": r}, "as": r.rpartition(".")[2]} for r in refs]
        if not exprs:
            raise unsupported("a relation with no output columns", "$", "a wire project needs a column")
        return {"op": "project", "id": self.node_id(), "exprs": exprs, "input": node}

    def _rel_read(self, body: dict[str, Any], path: str, nid: str) -> tuple[dict[str, Any], list[str]]:
        check_keys(
            body, {"common", "baseSchema", "namedTable", "filter", "bestEffortFilter", "projection"}, path, "read"
        )
        if "namedTable" not in body:
            raise unsupported("read without namedTable", path, "only named tables can be scanned")
        names_path = f"{path}.namedTable.names"
        check_keys(body["namedTable"], {"names"}, f"{path}.namedTable", "namedTable")
        table_parts = [str(n) for n in body["namedTable"].get("names", [])]
        if not table_parts:
            raise SubstraitError("invalid_substrait", "namedTable needs a name", names_path)
        table = table_parts[-1]
        schema = body.get("baseSchema", {})
        columns = [str(n) for n in schema.get("names", [])]
        types = schema.get("struct", {}).get("types", [])
        if len(types) != len(columns):
            raise unsupported("nested columns", f"{path}.baseSchema", "only flat schemas are modelled")
        wire_types = []
        for i, typ in enumerate(types):
            try:
                wt = wire_type(typ, f"{path}.baseSchema.struct.types[{i}]")
            except SubstraitError:
                wt = "unknown"
            wire_types.append(wt)
        known = self.catalog_tables.get(table.lower())
        scan: dict[str, Any] = {"op": "scan", "id": nid}
        if known is not None:
            table, cat_cols = known
            lower = {c.lower() for c in cat_cols}
            missing = [c for c in columns if c.lower() not in lower]
            if missing:
                raise SubstraitError(
                    "schema_mismatch",
                    f"columns {missing} of {table!r} are not in the catalog",
                    f"{path}.baseSchema.names",
                    {"table": table, "missing": missing, "catalog": cat_cols},
                )
        qualifier = self.qualifier(table)
        scan["table"] = table
        if qualifier != table:
            scan["alias"] = qualifier
        if known is None:
            scan["columns"] = columns
        refs = [f"{qualifier}.{c}" for c in columns]
        if "filter" in body:
            scan["filters"] = [self.expr(body["filter"], refs, f"{path}.filter")]
        # bestEffortFilter is a hint a consumer may ignore; results cannot depend on it, so it is not carried.
        if "projection" in body:
            proj = body["projection"]
            ppath = f"{path}.projection"
            check_keys(proj, {"select", "maintainSingularStruct"}, ppath, "projection")
            items = proj.get("select", {}).get("structItems", [])
            picked = []
            for i, item in enumerate(items):
                check_keys(item, {"field"}, f"{ppath}.select.structItems[{i}]", "structItem")
                index = int(item.get("field", 0))
                if not 0 <= index < len(refs):
                    raise SubstraitError(
                        "invalid_reference",
                        f"field {index} is not in the table",
                        f"{ppath}.select.structItems[{i}].field",
                    )
                picked.append(refs[index])
            return self._passthrough(scan, picked), picked
        return scan, refs

    def _rel_filter(self, body: dict[str, Any], path: str, nid: str) -> tuple[dict[str, Any], list[str]]:
        check_keys(body, {"common", "input", "condition"}, path, "filter")
        child, refs = self.rel(body.get("input"), f"{path}.input")
        predicate = self.expr(body.get("condition"), refs, f"{path}.condition")
        return {"op": "filter", "id": nid, "predicate": predicate, "input": child}, refs

    def _rel_project(self, body: dict[str, Any], path: str, nid: str) -> tuple[dict[str, Any], list[str]]:
        check_keys(body, {"common", "input", "expressions"}, path, "project")
        child, refs_in = self.rel(body.get("input"), f"{path}.input")
        exprs = [self.expr(e, refs_in, f"{path}.expressions[{i}]") for i, e in enumerate(body.get("expressions", []))]
        width = len(refs_in) + len(exprs)
        emit = body.get("common", {}).get("emit")
        mapping = self._mapping(emit, width, f"{path}.common.emit") if emit is not None else list(range(width))
        named: dict[int, str] = {}
        out, refs = [], []
        for j in mapping:
            if j < len(refs_in) or "col" in exprs[j - len(refs_in)]:
                ref = refs_in[j] if j < len(refs_in) else exprs[j - len(refs_in)]["col"]
                out.append({"expr": {"col": ref}, "as": ref.rpartition(".")[2]})
                refs.append(ref)
                continue
            if j not in named:
                named[j] = self.fresh()
            out.append({"expr": exprs[j - len(refs_in)], "as": named[j]})
            refs.append(named[j])
        if not out:
            raise unsupported("a project with no output columns", path, "a wire project needs a column")
        return {"op": "project", "id": nid, "exprs": out, "input": child}, refs

    def _rel_aggregate(self, body: dict[str, Any], path: str, nid: str) -> tuple[dict[str, Any], list[str]]:
        check_keys(body, {"common", "input", "groupings", "measures", "groupingExpressions"}, path, "aggregate")
        child, refs_in = self.rel(body.get("input"), f"{path}.input")
        top = body.get("groupingExpressions", [])
        groupings = body.get("groupings", [])
        if len(groupings) > 1:
            raise unsupported("grouping sets", f"{path}.groupings", "the aggregate node has a single grouping")
        if groupings:
            check_keys(groupings[0], {"expressionReferences"}, f"{path}.groupings[0]", "grouping")
            used = [int(r) for r in groupings[0].get("expressionReferences", [])]
            if used != list(range(len(top))):
                raise unsupported(
                    "a grouping that reorders or omits grouping expressions",
                    f"{path}.groupings[0]",
                    "its output order would be ambiguous",
                )
        elif top:
            raise SubstraitError(
                "invalid_substrait", "grouping expressions without a grouping", f"{path}.groupingExpressions"
            )
        group_by: list[Any] = []
        refs: list[str] = []
        for i, e in enumerate(top):
            key = self.expr(e, refs_in, f"{path}.groupingExpressions[{i}]")
            if "col" in key:
                group_by.append(key)
                refs.append(key["col"])
            else:
                name = self.fresh()
                group_by.append({"expr": key, "as": name})
                refs.append(name)
        aggregates: list[dict[str, Any]] = []
        for i, item in enumerate(body.get("measures", [])):
            mpath = f"{path}.measures[{i}]"
            check_keys(item, {"measure"}, mpath, "measure")
            aggregates.append(
                {"expr": self.measure(item.get("measure", {}), refs_in, f"{mpath}.measure"), "as": self.fresh()}
            )
            refs.append(aggregates[-1]["as"])
        node = {"op": "aggregate", "id": nid, "group_by": group_by, "aggregates": aggregates, "input": child}
        return node, refs

    def measure(self, m: dict[str, Any], refs: list[str], path: str) -> dict[str, Any]:
        check_keys(m, {"functionReference", "arguments", "invocation", "phase", "outputType"}, path, "measure")
        if m.get("phase", "AGGREGATION_PHASE_INITIAL_TO_RESULT") not in (
            "AGGREGATION_PHASE_INITIAL_TO_RESULT",
            "AGGREGATION_PHASE_UNSPECIFIED",
        ):
            raise unsupported(f"aggregation phase {m['phase']}", f"{path}.phase", "only complete aggregation is")
        invocation = m.get("invocation", "AGGREGATION_INVOCATION_ALL")
        if invocation not in (
            "AGGREGATION_INVOCATION_ALL",
            "AGGREGATION_INVOCATION_DISTINCT",
            "AGGREGATION_INVOCATION_UNSPECIFIED",
        ):
            raise SubstraitError("invalid_substrait", f"unknown invocation {invocation}", f"{path}.invocation")
        name = self.function(m, path)
        call: dict[str, Any] = {"fn": name.lower(), "args": self.arguments(m, refs, path)}
        if invocation == "AGGREGATION_INVOCATION_DISTINCT":
            call["distinct"] = True
        return call

    def _rel_join(self, body: dict[str, Any], path: str, nid: str) -> tuple[dict[str, Any], list[str]]:
        check_keys(body, {"common", "left", "right", "expression", "type"}, path, "join")
        jtype = body.get("type", "JOIN_TYPE_UNSPECIFIED")
        if jtype not in JOIN_TYPES:
            raise unsupported(f"join type {jtype}", f"{path}.type", "the wire join types cannot express it")
        left, lrefs = self.rel(body.get("left"), f"{path}.left")
        right, rrefs = self.rel(body.get("right"), f"{path}.right")
        on = None
        if "expression" in body:
            on = self.expr(body["expression"], lrefs + rrefs, f"{path}.expression")
            if on == {"lit": True, "type": "boolean"}:
                on = None
        wtype = JOIN_TYPES[jtype]
        if jtype.startswith("JOIN_TYPE_RIGHT_"):  # right semi/anti: the wire keeps the left side
            left, right, lrefs, rrefs = right, left, rrefs, lrefs
        node = {"op": "join", "id": nid, "type": wtype, "on": on, "left": left, "right": right}
        return node, lrefs if wtype in ("semi", "anti") else lrefs + rrefs

    def _rel_cross(self, body: dict[str, Any], path: str, nid: str) -> tuple[dict[str, Any], list[str]]:
        check_keys(body, {"common", "left", "right"}, path, "cross")
        left, lrefs = self.rel(body.get("left"), f"{path}.left")
        right, rrefs = self.rel(body.get("right"), f"{path}.right")
        return {"op": "join", "id": nid, "type": "cross", "on": None, "left": left, "right": right}, lrefs + rrefs

    def _rel_sort(self, body: dict[str, Any], path: str, nid: str) -> tuple[dict[str, Any], list[str]]:
        check_keys(body, {"common", "input", "sorts"}, path, "sort")
        child, refs = self.rel(body.get("input"), f"{path}.input")
        keys = []
        for i, item in enumerate(body.get("sorts", [])):
            spath = f"{path}.sorts[{i}]"
            check_keys(item, {"expr", "direction"}, spath, "sortField")
            direction = item.get("direction", "SORT_DIRECTION_UNSPECIFIED")
            if direction not in SORT_DIRECTIONS:
                raise unsupported(
                    f"sort direction {direction}", f"{spath}.direction", "only ASC/DESC with NULLS FIRST/LAST"
                )
            desc, nulls_first = SORT_DIRECTIONS[direction]
            keys.append(
                {"expr": self.expr(item.get("expr"), refs, f"{spath}.expr"), "desc": desc, "nulls_first": nulls_first}
            )
        return {"op": "sort", "id": nid, "keys": keys, "input": child}, refs

    def _rel_fetch(self, body: dict[str, Any], path: str, nid: str) -> tuple[dict[str, Any], list[str]]:
        check_keys(body, {"common", "input", "offsetExpr", "countExpr"}, path, "fetch")
        child, refs = self.rel(body.get("input"), f"{path}.input")
        values: dict[str, int | None] = {"offsetExpr": 0, "countExpr": None}
        for key in values:
            if key in body:
                lit = self.expr(body[key], refs, f"{path}.{key}")
                if not isinstance(lit.get("lit"), int) or isinstance(lit.get("lit"), bool) or lit["lit"] < 0:
                    raise unsupported(f"fetch.{key} that is not a non-negative integer literal", f"{path}.{key}")
                values[key] = lit["lit"]
        node = {"op": "limit", "id": nid, "count": values["countExpr"], "offset": values["offsetExpr"], "input": child}
        return node, refs

    def _rel_set(self, body: dict[str, Any], path: str, nid: str) -> tuple[dict[str, Any], list[str]]:
        check_keys(body, {"common", "inputs", "op"}, path, "set")
        op = body.get("op", "SET_OP_UNSPECIFIED")
        if op not in SET_OPS:
            raise unsupported(f"set operation {op}", f"{path}.op", "the wire has union, intersect and except")
        wop, all_ = SET_OPS[op]
        inputs = []
        first_refs: list[str] = []
        for i, item in enumerate(body.get("inputs", [])):
            node, refs = self.rel(item, f"{path}.inputs[{i}]")
            if i == 0:
                bases = [r.rpartition(".")[2].lower() for r in refs]
                if len(set(bases)) != len(bases):  # the set's columns are named after input 0's: make them unique
                    names = [self.fresh() for _ in refs]
                    node = {
                        "op": "project",
                        "id": self.node_id(),
                        "exprs": [{"expr": {"col": r}, "as": n} for r, n in zip(refs, names, strict=True)],
                        "input": node,
                    }
                    refs = names
                first_refs = [r.rpartition(".")[2] for r in refs]
            inputs.append(node)
        if wop != "union" and len(inputs) != 2:
            raise unsupported(f"{wop} of {len(inputs)} inputs", f"{path}.inputs", "the wire node is binary")
        return {"op": wop, "id": nid, "all": all_, "inputs": inputs}, first_refs

    # ------------------------------------------------------------ expressions

    def function(self, body: dict[str, Any], path: str) -> str:
        anchor = int(body.get("functionReference", 0))
        if anchor not in self.functions:
            raise SubstraitError(
                "unknown_function",
                f"function anchor {anchor} is not declared",
                f"{path}.functionReference",
                {"declared": sorted(self.functions)},
            )
        return self.functions[anchor]

    def arguments(self, body: dict[str, Any], refs: list[str], path: str) -> list[dict[str, Any]]:
        args = []
        for i, arg in enumerate(body.get("arguments", [])):
            apath = f"{path}.arguments[{i}]"
            check_keys(arg, {"value"}, apath, "functionArgument")
            args.append(self.expr(arg.get("value"), refs, f"{apath}.value"))
        return args

    def expr(self, raw: Any, refs: list[str], path: str) -> dict[str, Any]:
        kind, body = _single(raw, path, "an expression")
        path = f"{path}.{kind}"
        if kind == "selection":
            return self._selection(body, refs, path)
        if kind == "literal":
            return self.literal(body, path)
        if kind == "scalarFunction":
            return self._scalar_function(body, refs, path)
        if kind == "cast":
            check_keys(body, {"type", "input", "failureBehavior"}, path, "cast")
            if body.get("failureBehavior") == "FAILURE_BEHAVIOR_RETURN_NULL":
                raise unsupported(
                    "cast that returns NULL on failure", f"{path}.failureBehavior", "the wire cast fails on bad input"
                )
            target = wire_type(body.get("type"), f"{path}.type")
            self.types.setdefault(target, body["type"])
            inner = self.expr(body.get("input"), refs, f"{path}.input")
            if target == "date" and inner.get("type") == "string" and isinstance(inner.get("lit"), str):
                try:  # a date written as cast('1998-12-01' as date) becomes a date literal
                    return {"lit": dt.date.fromisoformat(inner["lit"]).isoformat(), "type": "date"}
                except ValueError:
                    pass
            return {"fn": "cast", "args": [inner], "type": target}
        if kind == "ifThen":
            check_keys(body, {"ifs", "else"}, path, "ifThen")
            args = []
            for i, clause in enumerate(body.get("ifs", [])):
                check_keys(clause, {"if", "then"}, f"{path}.ifs[{i}]", "ifClause")
                args.append(self.expr(clause.get("if"), refs, f"{path}.ifs[{i}].if"))
                args.append(self.expr(clause.get("then"), refs, f"{path}.ifs[{i}].then"))
            if "else" in body:
                args.append(self.expr(body["else"], refs, f"{path}.else"))
            return {"fn": "case", "args": args}
        if kind == "switchExpression":
            check_keys(body, {"match", "ifs", "else"}, path, "switchExpression")
            match = self.expr(body.get("match"), refs, f"{path}.match")
            args = []
            for i, clause in enumerate(body.get("ifs", [])):
                check_keys(clause, {"if", "then"}, f"{path}.ifs[{i}]", "switchClause")
                value = self.literal(clause.get("if", {}), f"{path}.ifs[{i}].if")
                args.append({"fn": "=", "args": [match, value]})
                args.append(self.expr(clause.get("then"), refs, f"{path}.ifs[{i}].then"))
            if "else" in body:
                args.append(self.expr(body["else"], refs, f"{path}.else"))
            return {"fn": "case", "args": args}
        if kind == "singularOrList":
            check_keys(body, {"value", "options"}, path, "singularOrList")
            value = self.expr(body.get("value"), refs, f"{path}.value")
            options = [self.expr(o, refs, f"{path}.options[{i}]") for i, o in enumerate(body.get("options", []))]
            if not options:
                raise unsupported("IN with an empty list", f"{path}.options", "the wire in needs a value")
            return {"fn": "in", "args": [value, *options]}
        if kind == "subquery":
            return self._subquery(body, refs, path)
        raise unsupported(f"{kind} expression", path, "the wire plan has no expression for it")

    def _selection(self, body: dict[str, Any], refs: list[str], path: str) -> dict[str, Any]:
        check_keys(body, {"directReference", "rootReference", "outerReference"}, path, "fieldReference")
        direct = body.get("directReference")
        if not isinstance(direct, dict) or set(direct) != {"structField"}:
            raise unsupported("a field reference that is not a struct field", path, "only top-level columns are")
        field = direct["structField"]
        check_keys(field, {"field"}, f"{path}.directReference.structField", "structField")
        index = int(field.get("field", 0))
        scope = refs
        if "outerReference" in body:
            steps = int(body["outerReference"].get("stepsOut", 0))
            if not 1 <= steps <= len(self.outer):
                raise SubstraitError(
                    "invalid_reference",
                    f"stepsOut {steps} leaves the plan",
                    f"{path}.outerReference.stepsOut",
                    {"depth": len(self.outer)},
                )
            scope = self.outer[-steps]
        elif "rootReference" not in body:
            raise unsupported("an expression reference", path, "only root and outer references are")
        if not 0 <= index < len(scope):
            raise SubstraitError(
                "invalid_reference",
                f"field {index} is outside the input's {len(scope)} columns",
                f"{path}.directReference.structField.field",
                {"available": list(scope)},
            )
        return {"col": scope[index]}

    def literal(self, body: dict[str, Any], path: str) -> dict[str, Any]:
        values = {k: v for k, v in body.items() if k not in ("nullable", "typeVariationReference")}
        if len(values) != 1:
            raise SubstraitError("invalid_substrait", "a literal has exactly one value", path)
        kind, value = next(iter(values.items()))
        if kind in ("i8", "i16", "i32", "i64"):
            return {"lit": int(value), "type": wire_type({kind: {}}, path)}
        if kind in ("fp32", "fp64"):
            if isinstance(value, str):
                raise unsupported("NaN or infinite literal", f"{path}.{kind}", "JSON cannot carry it")
            return {"lit": float(value), "type": wire_type({kind: {}}, path)}
        if kind == "boolean":
            return {"lit": bool(value), "type": "boolean"}
        if kind == "string":
            return {"lit": str(value), "type": "string"}
        if kind in ("varChar", "fixedChar"):
            return {"lit": str(value.get("value", "")), "type": "string"}
        if kind == "date":
            return {"lit": date_text(int(value)), "type": "date"}
        if kind == "decimal":
            text = decimal_text(value, f"{path}.decimal")
            precision, scale = int(value.get("precision", 0)), int(value.get("scale", 0))
            number: Any = text
            if Decimal(repr(float(text))) == Decimal(text):
                number = float(text) if scale else int(Decimal(text))
            return {"lit": number, "type": f"decimal({precision},{scale})"}
        if kind == "null":
            typ = wire_type(value, f"{path}.null")
            self.null_types.setdefault(typ, value)
            return {"lit": None, "type": typ}
        raise unsupported(f"{kind} literal", f"{path}.{kind}", "the wire has no literal of this type")

    def _scalar_function(self, body: dict[str, Any], refs: list[str], path: str) -> dict[str, Any]:
        check_keys(body, {"functionReference", "arguments", "outputType"}, path, "scalarFunction")
        name = self.function(body, path).lower()
        raw_args = body.get("arguments", [])
        if name in ("add", "subtract") and len(raw_args) == 2:
            kinds = [next(iter(a.get("value", {}).get("literal", {"": 0}))) for a in raw_args]
            if any(k in _INTERVALS for k in kinds):
                return self._date_arithmetic(name, raw_args, kinds, refs, path)
        args = self.arguments(body, refs, path)
        if name in ("like", "ilike") and len(args) == 3:
            # DataFusion writes the escape character as a third argument, NULL for "none"; a NULL escape
            # kept on the wire would make the engine fold the predicate to NULL.
            if args[2].get("lit", "") is not None:
                raise unsupported(
                    f"{name.upper()} with an escape character", f"{path}.arguments[2]", "the wire like has no escape"
                )
            args = args[:2]
        return {"fn": SUBSTRAIT_TO_WIRE_FN.get(name, name), "args": args}

    def _date_arithmetic(
        self, name: str, raw_args: list[dict[str, Any]], kinds: list[str], refs: list[str], path: str
    ) -> dict[str, Any]:
        """``date literal ± interval literal`` folded into a date literal; the wire has no interval type."""
        pos = 1 if kinds[1] in _INTERVALS else 0
        if name == "subtract" and pos == 0:
            raise unsupported("interval - date", path, "it has no meaning")
        other = self.expr(raw_args[1 - pos]["value"], refs, f"{path}.arguments[{1 - pos}].value")
        ipath = f"{path}.arguments[{pos}].value.literal.{kinds[pos]}"
        if other.get("type") != "date" or not isinstance(other.get("lit"), str):
            raise unsupported(
                "interval arithmetic on anything but a date literal", ipath, "the wire has no interval type"
            )
        interval = raw_args[pos]["value"]["literal"][kinds[pos]]
        ym = interval.get("intervalYearToMonth", {}) if kinds[pos] == "intervalCompound" else interval
        ds = interval.get("intervalDayToSecond", {}) if kinds[pos] == "intervalCompound" else interval
        months = 12 * int(ym.get("years", 0)) + int(ym.get("months", 0)) if kinds[pos] != "intervalDayToSecond" else 0
        days = int(ds.get("days", 0)) if kinds[pos] != "intervalYearToMonth" else 0
        if kinds[pos] != "intervalYearToMonth" and (
            int(ds.get("seconds", 0)) or int(ds.get("subseconds", 0)) or int(ds.get("microseconds", 0))
        ):
            raise unsupported("date ± an interval with a time part", ipath, "the result would be a timestamp")
        sign = -1 if name == "subtract" else 1
        day = add_months(dt.date.fromisoformat(other["lit"]), sign * months) + dt.timedelta(days=sign * days)
        return {"lit": day.isoformat(), "type": "date"}

    def _subquery(self, body: dict[str, Any], refs: list[str], path: str) -> dict[str, Any]:
        kind, sub = _single(body, path, "a subquery")
        spath = f"{path}.{kind}"
        self.outer.append(refs)
        try:
            if kind == "scalar":
                check_keys(sub, {"input"}, spath, "scalar subquery")
                plan, _ = self.rel(sub.get("input"), f"{spath}.input")
                return {"subquery": plan, "kind": "scalar"}
            if kind == "inPredicate":
                check_keys(sub, {"needles", "haystack"}, spath, "inPredicate")
                needles = sub.get("needles", [])
                if len(needles) != 1:
                    raise unsupported("IN with several needles", f"{spath}.needles", "the wire in takes one")
                plan, _ = self.rel(sub.get("haystack"), f"{spath}.haystack")
            elif kind == "setPredicate":
                check_keys(sub, {"predicateOp", "tuples"}, spath, "setPredicate")
                if sub.get("predicateOp") != "PREDICATE_OP_EXISTS":
                    raise unsupported(
                        f"set predicate {sub.get('predicateOp')}", f"{spath}.predicateOp", "only EXISTS is modelled"
                    )
                plan, _ = self.rel(sub.get("tuples"), f"{spath}.tuples")
                return {"subquery": plan, "kind": "exists"}
            else:
                raise unsupported(f"{kind} subquery", spath, "the wire has scalar, exists and in subqueries")
        finally:
            self.outer.pop()
        needle = self.expr(needles[0], refs, f"{spath}.needles[0]")
        return {"subquery": plan, "kind": "in", "args": [needle]}


def _walk_dicts(item: Any) -> Any:
    stack = [item]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            yield cur
            stack.extend(v for v in cur.values() if isinstance(v, (dict, list)))
        elif isinstance(cur, list):
            stack.extend(v for v in cur if isinstance(v, (dict, list)))


def read_substrait(
    substrait_json: Any, catalog: dict[str, Any] | None, root: str = "$"
) -> tuple[Reader, dict[str, Any]]:
    """Validate and read a document; the reader keeps what ``plan_to_substrait`` reuses."""
    doc, used_old = validate(substrait_json, root)
    reader = Reader(doc, catalog, root)
    reader.deprecated_groupings = used_old
    return reader, reader.plan()


def substrait_to_plan(
    substrait_json: dict[str, Any], catalog: dict[str, Any] | None = None, root: str = "$"
) -> dict[str, Any]:
    """A Substrait plan (protobuf JSON) as the naive, faithful wire plan; raises ``SubstraitError``.

    ``root`` prefixes the JSON paths in errors (the HTTP layer passes ``$.substrait``).
    """
    return read_substrait(substrait_json, catalog, root)[1]
