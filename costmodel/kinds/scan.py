"""``scan``: reads a table; predicates pushed into it are its ``filters``, an index lookup its ``index``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.expr import Column, Expr, and_
from costmodel.kinds.registry import OperatorKind, register
from costmodel.kinds.shape import no_equalities, no_wire_children
from costmodel.kinds.text import exprs_text
from costmodel.plan import Field, IndexLookup, Node, Scan
from costmodel.rules.scan import push_into_scan
from costmodel.strict import check_keys
from costmodel.wire.names import Namer
from costmodel.wire.write import expr_to_wire

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder

_INDEX_KEYS: Final = frozenset({"name", "columns", "predicates"})


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    table = raw.get("table")
    if not isinstance(table, str) or not table:
        raise PlanError("missing_field", "scan needs a table name", f"{path}.table")
    alias = raw.get("alias")
    if alias is not None and not isinstance(alias, str):
        raise PlanError("invalid_node", "alias must be a string", f"{path}.alias")
    info = b.catalog.table(table)
    qualifier = alias or table
    given = raw.get("columns")
    if given is not None and (not isinstance(given, list) or not all(isinstance(c, str) for c in given)):
        raise PlanError("invalid_node", "columns must be a list of column names", f"{path}.columns")
    columns = tuple(given) if given is not None else None
    if info is not None and info.columns:
        fields = tuple(Field(b.cid(), c.name, qualifier, c.type) for c in info.columns)
    elif columns is not None:
        fields = tuple(Field(b.cid(), c, qualifier) for c in columns)
    else:
        raise PlanError(
            "unknown_table",
            f"table {table!r} is not in the catalog",
            f"{path}.table",
            {"table": table, "available": sorted(b.catalog.tables)},
        )
    filters = b.expr_list(raw.get("filters"), fields, f"{path}.filters", depth)
    containers = raw.get("containers")
    if containers is not None and (not isinstance(containers, list) or not all(isinstance(c, str) for c in containers)):
        raise PlanError("invalid_node", "containers must be a list of container ids", f"{path}.containers")
    index = _read_index(b, raw.get("index"), fields, f"{path}.index", depth)
    kept = tuple(containers) if containers is not None else None
    return Scan(nid, table, alias, filters, fields, index, kept, columns)


def _read_index(b: Binder, raw: Any, fields: tuple[Field, ...], path: str, depth: int) -> IndexLookup | None:
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
    predicates = b.expr_list(raw.get("predicates"), fields, f"{path}.predicates", depth)
    return IndexLookup(name, tuple(columns), predicates)


def _write(node: Scan, namer: Namer, write_child: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"op": "scan", "id": node.id, "table": node.table}
    if node.alias:
        out["alias"] = node.alias
    out["filters"] = [expr_to_wire(f, namer) for f in node.filters]
    if node.index is not None:
        out["index"] = {
            "name": node.index.index,
            "columns": list(node.index.columns),
            "predicates": [expr_to_wire(p, namer) for p in node.index.predicates],
        }
    if node.containers is not None:
        out["containers"] = list(node.containers)
    if node.columns is not None:
        out["columns"] = list(node.columns)
    return out


def _describe(node: Scan, namer: Namer) -> str:
    text = f"TableScan: {node.table}" + (f" AS {node.alias}" if node.alias else "")
    if node.index is not None:
        text = f"Indexed table access on index [{node.table}.{', '.join(node.index.columns)}] " + text
    if node.filters:
        text += f" filters=[{exprs_text(node.filters, namer)}]"
    return text


def _estimate(model: CostModel, node: Scan, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    """Rows read (after container pruning or through an index) and rows kept by the scan's filters."""
    opts = model.options
    table = model.catalog.table(node.table)
    rows = table.row_count if table is not None and table.row_count is not None else None
    if rows is None:
        rows = opts.default_row_count
        message = f"table {node.table!r} has no row_count; assumed {rows:g} rows"
        if message not in model.warnings:
            model.warnings.append(message)
    ndv: dict[int, float] = {}
    for f in node.fields:
        if model.tracked is not None and f.cid not in model.tracked:
            continue
        stats = table.stats_for(f.name) if table is not None else None
        if stats is not None and stats.ndv:
            ndv[f.cid] = min(float(stats.ndv), rows)
        else:
            ndv[f.cid] = rows
            model.guessed.add(f.cid)
    table_rows = rows
    k_read = opts.k("scan")
    if node.containers is not None and table is not None and table.containers:
        rows = model.kept_rows(table, node.containers, rows)
    index_predicates = list(node.index.predicates) if node.index is not None else []
    if node.index is not None:
        # as a whole, as scan_access chose the index: bounds on one column are one interval (estimate_ranges)
        fetched = table_rows * model.estimator.estimate(and_(index_predicates)).selectivity
        rows = min(rows, fetched)
        k_read = opts.k("index_lookup")
    base_ndv = dict(ndv)
    out, k_filters = model.apply(table_rows, ndv, list(node.filters) + index_predicates)
    # the filters' own cost is paid on the rows actually read
    k_filters -= sum(model.predicate_cost(p) for p in index_predicates)
    out = min(out, rows)
    return model.make(node, (rows,), out, k_read + max(k_filters, 0.0), ndv, 0.0, (table_rows, base_ndv))


def _own_fields(node: Scan) -> tuple[Field, ...]:
    return node.fields


def _expressions(node: Scan) -> list[Expr]:
    return list(node.filters)


def _no_inputs(node: Scan, null_supplying: bool) -> tuple[bool, ...]:
    return ()


def _no_equalities(node: Scan) -> tuple[list[tuple[Column, Column]], tuple[Node, ...]]:
    return no_equalities(node)


KIND: Final = register(
    OperatorKind(
        name="scan",
        node_type=Scan,
        ops=("scan",),
        wire_keys=frozenset({"table", "alias", "filters", "columns", "containers", "index"}),
        default_k=1.0,
        output_fields=_own_fields,
        scope=_own_fields,
        expressions=_expressions,
        label="scan",
        read=_read,
        wire_children=no_wire_children,
        write=_write,
        describe=_describe,
        title=lambda node: f"TableScan {node.table}",
        push_through=push_into_scan,
        estimate=_estimate,
        key_equalities=_no_equalities,
        null_supplying=_no_inputs,
        index_join_through=True,
        renames_columns=False,
    )
)
