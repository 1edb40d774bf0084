"""``sort``: orders rows by ``keys``; with ``limit`` it is a top-N."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.expr import Expr
from costmodel.kinds.registry import SAME_AS_INPUT, OperatorKind, register
from costmodel.kinds.shape import (
    input_scope,
    pass_equalities,
    same_null_supplying,
    wire_input,
)
from costmodel.kinds.text import keys_text
from costmodel.plan import Node, Sort, output_fields
from costmodel.rules.sort import push_through_sort
from costmodel.wire.names import Namer
from costmodel.wire.write import keys_to_wire

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    child = b.child(raw, "input", path, depth)
    keys = b.sort_keys(raw.get("keys", []), output_fields(child), f"{path}.keys", depth)
    limit = raw.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise PlanError("invalid_node", "limit must be a non-negative integer", f"{path}.limit")
    return Sort(nid, keys, child, limit)


def _write(node: Sort, namer: Namer, write_child: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"op": "sort", "id": node.id, "keys": keys_to_wire(node.keys, namer)}
    if node.limit is not None:
        out["limit"] = node.limit
    out["input"] = write_child(node.input)
    return out


def _estimate(model: CostModel, node: Sort, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    child = kids[0]
    if node.limit is not None:  # a top-N is a boundary: rows above it are its own
        return model.make(node, inputs, min(inputs[0], float(node.limit)), model.options.k("sort"), dict(child.ndv))
    base = (child.base_rows, child.base_ndv)
    return model.make(node, inputs, inputs[0], model.options.k("sort"), dict(child.ndv), 0.0, base)


def _expressions(node: Sort) -> list[Expr]:
    return [k.expr for k in node.keys]


def _describe(node: Sort, namer: Namer) -> str:
    limit = f" fetch={node.limit}" if node.limit is not None else ""
    return f"Sort: {keys_text(node.keys, namer)}{limit}"


KIND: Final = register(
    OperatorKind(
        name="sort",
        node_type=Sort,
        ops=("sort",),
        wire_keys=frozenset({"keys", "limit", "input"}),
        default_k=3.0,
        output_fields=SAME_AS_INPUT,
        scope=input_scope,
        expressions=_expressions,
        label="sort",
        read=_read,
        wire_children=wire_input,
        write=_write,
        describe=_describe,
        title=lambda node: "Sort",
        push_through=push_through_sort,
        estimate=_estimate,
        key_equalities=pass_equalities,
        null_supplying=same_null_supplying,
        index_join_through=False,
        renames_columns=False,
    )
)
