"""``generate``: each input row joined to the rows a generator makes of it (Spark's ``LATERAL VIEW
[OUTER] explode(...) alias AS col``, DuckDB's ``CROSS JOIN UNNEST``); a barrier.

    Filter: x.v > 1                    (stays where it is)
      Generate: explode(t.arr) AS x(v)

It adds the generated columns, qualified by ``alias``, to its input's and may
repeat an input row many times or (``outer``) pad it with NULLs. No predicate is
moved across it, in either direction: the adapter keeps a LATERAL VIEW where
the query wrote it, and the engine reports a filter above it as staying.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.expr import Expr
from costmodel.kinds.registry import OperatorKind, register
from costmodel.kinds.shape import (
    input_scope,
    pass_equalities,
    same_null_supplying,
    wire_input,
)
from costmodel.plan import Field, Generate, Node, output_fields
from costmodel.reasons import Reason
from costmodel.render import to_sql
from costmodel.rules import Blocked, Outcome
from costmodel.wire.names import Namer
from costmodel.wire.write import expr_to_wire

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder


def push_through_generate(predicate: Expr, node: Generate) -> Outcome:
    return Blocked(Reason.GENERATOR, "a generator (LATERAL VIEW / UNNEST) is a barrier: filters stay on their side")


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    child = b.child(raw, "input", path, depth)
    if "generator" not in raw:
        raise PlanError("missing_field", "generate needs a generator expression", f"{path}.generator")
    generator = b.expr(raw["generator"], output_fields(child), f"{path}.generator", depth + 1)
    alias = raw.get("alias")
    if not isinstance(alias, str) or not alias:
        raise PlanError("invalid_node", "generate needs an alias (the generated columns' qualifier)", f"{path}.alias")
    names = raw.get("columns")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise PlanError("invalid_node", "columns must be a non-empty list of names", f"{path}.columns")
    outer = raw.get("outer", False)
    if not isinstance(outer, bool):
        raise PlanError("invalid_node", "outer must be true or false", f"{path}.outer")
    columns = tuple(Field(b.cid(), name, alias) for name in names)
    return Generate(nid, generator, outer, alias, columns, child)


def _write(node: Generate, namer: Namer, write_child: Any) -> dict[str, Any]:
    return {
        "op": "generate",
        "id": node.id,
        "generator": expr_to_wire(node.generator, namer),
        "outer": node.outer,
        "alias": node.alias,
        "columns": [f.name for f in node.columns],
        "input": write_child(node.input),
    }


def _title(node: Generate) -> str:
    return "Generate outer" if node.outer else "Generate"


def _describe(node: Generate, namer: Namer) -> str:
    columns = ", ".join(f.name for f in node.columns)
    return f"{_title(node)}: {to_sql(node.generator, namer)} AS {node.alias}({columns})"


def _estimate(model: CostModel, node: Generate, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    """The generator's fan-out is unknown: as many rows out as in (nothing is decided on it)."""
    child = kids[0]
    return model.make(node, inputs, inputs[0], model.options.k("generate"), dict(child.ndv))


KIND: Final = register(
    OperatorKind(
        name="generate",
        node_type=Generate,
        ops=("generate",),
        wire_keys=frozenset({"generator", "outer", "alias", "columns", "input"}),
        default_k=1.0,
        output_fields=lambda node: output_fields(node.input) + node.columns,
        scope=input_scope,
        expressions=lambda node: [node.generator],
        label="generate",
        read=_read,
        wire_children=wire_input,
        write=_write,
        describe=_describe,
        title=_title,
        push_through=push_through_generate,
        estimate=_estimate,
        key_equalities=pass_equalities,
        null_supplying=same_null_supplying,
        index_join_through=False,
        renames_columns=True,
    )
)
