"""``project``: computes named expressions (``exprs``) from its input's columns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.expr import Expr
from costmodel.kinds.registry import OperatorKind, register
from costmodel.kinds.shape import (
    fields_of,
    input_scope,
    pass_equalities,
    same_null_supplying,
    wire_input,
)
from costmodel.kinds.text import named_text
from costmodel.plan import Node, Project, output_fields
from costmodel.rules.project import push_through_project
from costmodel.wire.names import Namer
from costmodel.wire.write import named_to_wire

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    child = b.child(raw, "input", path, depth)
    exprs = raw.get("exprs")
    if not isinstance(exprs, list) or not exprs:
        raise PlanError("missing_field", "project needs a non-empty exprs list", f"{path}.exprs")
    scope = output_fields(child)
    return Project(nid, tuple(b.named(e, scope, f"{path}.exprs[{i}]", depth, i) for i, e in enumerate(exprs)), child)


def _write(node: Project, namer: Namer, write_child: Any) -> dict[str, Any]:
    exprs = [named_to_wire(e, namer) for e in node.exprs]
    return {"op": "project", "id": node.id, "exprs": exprs, "input": write_child(node.input)}


def _estimate(model: CostModel, node: Project, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    """Rows unchanged; a computed column reading one column has that column's NDV."""
    child = kids[0]
    ndv, base_ndv = dict(child.ndv), dict(child.base_ndv)
    for named in node.exprs:
        if named.cid not in ndv:
            guess = model.expr_ndv(named.expr, child.ndv)
            if guess is not None:
                ndv[named.cid] = guess
            base_guess = model.expr_ndv(named.expr, child.base_ndv)
            if base_guess is not None:
                base_ndv[named.cid] = base_guess
    return model.make(node, inputs, inputs[0], model.options.k("project"), ndv, 0.0, (child.base_rows, base_ndv))


def _expressions(node: Project) -> list[Expr]:
    return [e.expr for e in node.exprs]


KIND: Final = register(
    OperatorKind(
        name="project",
        node_type=Project,
        ops=("project",),
        wire_keys=frozenset({"exprs", "input"}),
        default_k=1.0,
        output_fields=lambda node: fields_of(node.exprs),
        scope=input_scope,
        expressions=_expressions,
        label="project",
        read=_read,
        wire_children=wire_input,
        write=_write,
        describe=lambda node, namer: f"Projection: {named_text(node.exprs, namer)}",
        title=lambda node: "Projection",
        push_through=push_through_project,
        estimate=_estimate,
        key_equalities=pass_equalities,
        null_supplying=same_null_supplying,
        index_join_through=True,
        renames_columns=True,
    )
)
