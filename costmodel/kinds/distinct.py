"""``distinct``: removes duplicate rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.kinds.registry import SAME_AS_INPUT, OperatorKind, register
from costmodel.kinds.shape import (
    input_scope,
    no_expressions,
    pass_equalities,
    same_null_supplying,
    wire_input,
)
from costmodel.plan import Distinct, Node, output_fields
from costmodel.rules.passthrough import push_through_distinct
from costmodel.wire.names import Namer

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    return Distinct(nid, b.child(raw, "input", path, depth))


def _write(node: Distinct, namer: Namer, write_child: Any) -> dict[str, Any]:
    return {"op": "distinct", "id": node.id, "input": write_child(node.input)}


def _estimate(model: CostModel, node: Distinct, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    """Distinct rows = product of the columns' NDVs, capped by the rows in."""
    rows_in = inputs[0]
    groups = 1.0
    for f in output_fields(node):
        value = kids[0].ndv.get(f.cid)
        groups *= value if value is not None else rows_in
        if groups >= rows_in:
            break
    return model.make(node, inputs, min(rows_in, groups), model.options.k("distinct"), dict(kids[0].ndv))


KIND: Final = register(
    OperatorKind(
        name="distinct",
        node_type=Distinct,
        ops=("distinct",),
        wire_keys=frozenset({"input"}),
        default_k=4.0,
        output_fields=SAME_AS_INPUT,
        scope=input_scope,
        expressions=no_expressions,
        label="distinct",
        read=_read,
        wire_children=wire_input,
        write=_write,
        describe=lambda node, namer: "Distinct",
        title=lambda node: "Distinct",
        push_through=push_through_distinct,
        estimate=_estimate,
        key_equalities=pass_equalities,
        null_supplying=same_null_supplying,
        index_join_through=False,
        renames_columns=False,
    )
)
