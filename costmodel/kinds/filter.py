"""``filter``: keeps the rows its ``predicate`` is true on; its k is its conjuncts' short-circuit cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.expr import Expr, conjuncts
from costmodel.kinds.registry import SAME_AS_INPUT, OperatorKind, register
from costmodel.kinds.shape import (
    input_scope,
    pass_equalities,
    same_null_supplying,
    wire_input,
)
from costmodel.plan import Filter, Node, output_fields
from costmodel.render import to_sql
from costmodel.rules.filter import push_through_filter
from costmodel.wire.names import Namer
from costmodel.wire.write import expr_to_wire

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    child = b.child(raw, "input", path, depth)
    if "predicate" not in raw:
        raise PlanError("missing_field", "filter needs a predicate", f"{path}.predicate")
    return Filter(nid, b.expr(raw["predicate"], output_fields(child), f"{path}.predicate", depth + 1), child)


def _write(node: Filter, namer: Namer, write_child: Any) -> dict[str, Any]:
    predicate = expr_to_wire(node.predicate, namer)
    return {"op": "filter", "id": node.id, "predicate": predicate, "input": write_child(node.input)}


def _estimate(model: CostModel, node: Filter, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    ndv = dict(kids[0].ndv)
    out, k = model.apply(inputs[0], ndv, conjuncts(node.predicate))
    carry = model.carry_cost(node.input, node.predicate)  # columns carried up for a raised predicate
    return model.make(node, inputs, out, k, ndv, carry, (kids[0].base_rows, kids[0].base_ndv))


def _expressions(node: Filter) -> list[Expr]:
    return [node.predicate]


KIND: Final = register(
    OperatorKind(
        name="filter",
        node_type=Filter,
        ops=("filter",),
        wire_keys=frozenset({"predicate", "input"}),
        default_k=1.0,
        output_fields=SAME_AS_INPUT,
        scope=input_scope,
        expressions=_expressions,
        label="filter",
        read=_read,
        wire_children=wire_input,
        write=_write,
        describe=lambda node, namer: f"Filter: {to_sql(node.predicate, namer)}",
        title=lambda node: "Filter",
        push_through=push_through_filter,
        estimate=_estimate,
        key_equalities=pass_equalities,
        null_supplying=same_null_supplying,
        index_join_through=True,
        renames_columns=False,
    )
)
