"""``union`` / ``intersect`` / ``except`` (all or distinct): columns match by position; one cost constant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.kinds.registry import OperatorKind, register
from costmodel.kinds.shape import no_equalities, no_expressions, no_scope
from costmodel.plan import Field, Node, SetOp, output_fields
from costmodel.rules.setop import push_through_setop
from costmodel.wire.names import Namer

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    inputs_raw = raw.get("inputs")
    if not isinstance(inputs_raw, list) or len(inputs_raw) < 2:
        raise PlanError("missing_field", f"{raw['op']} needs at least two inputs", f"{path}.inputs")
    inputs = tuple(b.node(item, f"{path}.inputs[{i}]", depth + 1) for i, item in enumerate(inputs_raw))
    first = output_fields(inputs[0])
    for i, branch in enumerate(inputs[1:], start=1):
        if len(output_fields(branch)) != len(first):
            raise PlanError(
                "column_count_mismatch",
                f"input {i} has {len(output_fields(branch))} columns, input 0 has {len(first)}",
                f"{path}.inputs[{i}]",
            )
    all_rows = raw.get("all", False)
    if not isinstance(all_rows, bool):
        raise PlanError("invalid_node", "all must be true or false", f"{path}.all")
    return SetOp(nid, raw["op"], all_rows, inputs, tuple(Field(b.cid(), f.name, None, f.type) for f in first))


def _wire_children(raw: dict[str, Any], path: str) -> list[tuple[Any, str]]:
    inputs = raw.get("inputs")
    if not isinstance(inputs, list) or len(inputs) < 2:
        return []  # ``_read`` refuses it
    return [(item, f"{path}.inputs[{i}]") for i, item in enumerate(inputs)]


def _write(node: SetOp, namer: Namer, write_child: Any) -> dict[str, Any]:
    return {"op": node.op, "id": node.id, "all": node.all, "inputs": [write_child(i) for i in node.inputs]}


def _estimate(model: CostModel, node: SetOp, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    if node.op == "union":
        out = sum(inputs)
    elif node.op == "intersect":
        out = min(inputs)
    else:
        out = inputs[0]
    return model.make(node, inputs, out, model.options.k("union"), {})


def _title(node: SetOp) -> str:
    return f"{node.op.capitalize()}{' All' if node.all else ''}"


KIND: Final = register(
    OperatorKind(
        name="union",
        node_type=SetOp,
        ops=("union", "intersect", "except"),
        wire_keys=frozenset({"all", "inputs"}),
        default_k=1.0,
        output_fields=lambda node: node.fields,
        scope=no_scope,
        expressions=no_expressions,
        label=lambda node: node.op,
        read=_read,
        wire_children=_wire_children,
        write=_write,
        describe=lambda node, namer: _title(node),
        title=_title,
        push_through=push_through_setop,
        estimate=_estimate,
        key_equalities=no_equalities,
        null_supplying=lambda node, null_supplying: (null_supplying,) * len(node.inputs),
        index_join_through=False,
        renames_columns=True,
    )
)
