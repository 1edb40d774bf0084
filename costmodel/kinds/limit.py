"""``limit``: the first ``count`` rows after skipping ``offset``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.kinds.registry import SAME_AS_INPUT, OperatorKind, register
from costmodel.kinds.shape import (
    input_scope,
    no_expressions,
    pass_equalities,
    same_null_supplying,
    wire_input,
)
from costmodel.plan import Limit, Node
from costmodel.rules.limit import push_through_limit
from costmodel.wire.names import Namer

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    child = b.child(raw, "input", path, depth)
    count = raw.get("count")
    offset = raw.get("offset", 0) or 0
    for key, value in (("count", count), ("offset", offset)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise PlanError("invalid_node", f"{key} must be a non-negative integer", f"{path}.{key}")
    return Limit(nid, count, offset, child)


def _write(node: Limit, namer: Namer, write_child: Any) -> dict[str, Any]:
    return {"op": "limit", "id": node.id, "count": node.count, "offset": node.offset, "input": write_child(node.input)}


def _estimate(model: CostModel, node: Limit, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    out = max(0.0, inputs[0] - node.offset)
    if node.count is not None:
        out = min(out, float(node.count))
    return model.make(node, inputs, out, model.options.k("limit"), dict(kids[0].ndv))


def _describe(node: Limit, namer: Namer) -> str:
    return f"Limit: skip={node.offset}, fetch={node.count if node.count is not None else 'None'}"


KIND: Final = register(
    OperatorKind(
        name="limit",
        node_type=Limit,
        ops=("limit",),
        wire_keys=frozenset({"count", "offset", "input"}),
        default_k=1.0,
        output_fields=SAME_AS_INPUT,
        scope=input_scope,
        expressions=no_expressions,
        label="limit",
        read=_read,
        wire_children=wire_input,
        write=_write,
        describe=_describe,
        title=lambda node: "Limit",
        push_through=push_through_limit,
        estimate=_estimate,
        key_equalities=pass_equalities,
        null_supplying=same_null_supplying,
        index_join_through=False,
        renames_columns=False,
    )
)
