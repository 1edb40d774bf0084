"""``alias``: ``FROM (...) AS name``, the same columns (same cids) under a new qualifier."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.kinds.registry import OperatorKind, register
from costmodel.kinds.shape import (
    input_scope,
    no_expressions,
    pass_equalities,
    same_null_supplying,
    wire_input,
)
from costmodel.plan import Alias, Field, Node, output_fields
from costmodel.rules.passthrough import push_through_alias
from costmodel.wire.names import Namer

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    child = b.child(raw, "input", path, depth)
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
                f"alias names {len(names_raw) if isinstance(names_raw, list) else '?'} columns, input has {len(inner)}",
                f"{path}.columns",
            )
        names = tuple(str(n) for n in names_raw)
    fields = tuple(Field(f.cid, names[i] if names else f.name, name, f.type) for i, f in enumerate(inner))
    return Alias(nid, name, child, fields, names)


def _write(node: Alias, namer: Namer, write_child: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"op": "alias", "id": node.id, "name": node.name}
    if node.column_names:
        out["columns"] = list(node.column_names)
    out["input"] = write_child(node.input)
    return out


def _estimate(model: CostModel, node: Alias, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    child = kids[0]
    base = (child.base_rows, child.base_ndv)
    return model.make(node, inputs, inputs[0], model.options.k("alias"), dict(child.ndv), 0.0, base)


KIND: Final = register(
    OperatorKind(
        name="alias",
        node_type=Alias,
        ops=("alias",),
        wire_keys=frozenset({"name", "columns", "input"}),
        default_k=0.0,
        output_fields=lambda node: node.fields,
        scope=input_scope,
        expressions=no_expressions,
        label="alias",
        read=_read,
        wire_children=wire_input,
        write=_write,
        describe=lambda node, namer: f"SubqueryAlias: {node.name}",
        title=lambda node: "SubqueryAlias",
        push_through=push_through_alias,
        estimate=_estimate,
        key_equalities=pass_equalities,
        null_supplying=same_null_supplying,
        index_join_through=True,
        renames_columns=True,
    )
)
