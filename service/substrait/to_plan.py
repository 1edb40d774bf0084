"""Substrait plan JSON -> wire plan.

Substrait refers to columns by position in each relation's output; the wire
plan refers to them by name. The reader therefore tracks, for every relation,
the wire name of each output position: ``qualifier.column`` for table columns
(every scan gets a qualifier of its own, so self-joins stay unambiguous) and
a fresh ``_sN`` name for every computed column. Anything it does not model is
refused with the JSON path of the construct, never dropped.
"""

from __future__ import annotations

from typing import Any

from service.substrait.common import (
    JOIN_TYPES,
    SET_OPS,
    SORT_DIRECTIONS,
    SubstraitError,
    check_keys,
    unsupported,
    validate,
    walk_dicts,
    wire_type,
)
from service.substrait.read_expr import ExpressionReader, single

_TOP_LEVEL = frozenset({"version", "extensionUris", "extensionUrns", "extensions", "relations", "expectedTypeUrls"})


class Reader(ExpressionReader):
    """One pass over a validated document; also remembers what the writer reuses (by node id).

    Relations are read here, expressions by ``ExpressionReader`` (service/substrait/read_expr.py).
    """

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
            kind, body = single(ext, f"{root}.extensions[{i}]", "an extension declaration")
            if kind == "extensionFunction":
                self.functions[int(body.get("functionAnchor", 0))] = str(body.get("name", "")).split(":")[0]
                self.declarations.append(body)
        for item in walk_dicts(doc.get("relations", [])):
            schema = item.get("baseSchema")
            if isinstance(schema, dict):
                self._names.update(str(n) for n in schema.get("names", []))
        relations = doc.get("relations", [])
        if len(relations) != 1:
            raise unsupported("several relations", f"{root}.relations", "a plan must have exactly one relation")
        kind, body = single(relations[0], f"{root}.relations[0]", "a plan relation")
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
        kind, body = single(rel, path, "a relation")
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
