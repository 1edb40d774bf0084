"""``window``: adds one column per window function over ``partition_by`` / ``order_by`` and a frame."""

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
from costmodel.kinds.text import exprs_text, keys_text, named_text
from costmodel.plan import Field, NamedExpr, Node, Window, WindowFrame, output_fields
from costmodel.rules.window import push_through_window
from costmodel.strict import check_keys
from costmodel.wire.names import Namer
from costmodel.wire.write import expr_to_wire, keys_to_wire, named_to_wire

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder

_FUNCTION_KEYS: Final = frozenset({"expr", "as", "partition_by", "frame"})
_FRAME_KEYS: Final = frozenset({"kind", "start", "end"})
_FRAME_KINDS: Final = ("rows", "range")


def _frame_bound(raw: Any, path: str) -> str:
    """``unbounded preceding``, ``N preceding``, ``current row``, ``N following`` or ``unbounded following``."""
    words = raw.lower().split() if isinstance(raw, str) else []
    if words == ["current", "row"]:
        return "current row"
    if len(words) == 2 and words[1] in ("preceding", "following") and (words[0] == "unbounded" or words[0].isdigit()):
        return f"{words[0] if words[0] == 'unbounded' else int(words[0])} {words[1]}"
    raise PlanError(
        "invalid_node",
        "a frame bound is 'unbounded preceding', 'N preceding', 'current row', 'N following' or 'unbounded following'",
        path,
    )


def read_frame(raw: Any, path: str) -> WindowFrame | None:
    """A window function's frame ``{"kind", "start", "end"}``; absent bounds take SQL's defaults."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise PlanError("invalid_node", 'a frame is {"kind", "start", "end"}', path)
    check_keys(raw, _FRAME_KEYS, path)
    kind = raw.get("kind", "rows")
    if not isinstance(kind, str) or kind.lower() not in _FRAME_KINDS:
        raise PlanError("invalid_node", "frame kind must be rows or range", f"{path}.kind")
    start = _frame_bound(raw.get("start", "unbounded preceding"), f"{path}.start")
    end = _frame_bound(raw.get("end", "current row"), f"{path}.end")
    return WindowFrame(kind.lower(), start, end)


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    child = b.child(raw, "input", path, depth)
    scope = output_fields(child)
    partition = b.expr_list(raw.get("partition_by"), scope, f"{path}.partition_by", depth)
    order = b.sort_keys(raw.get("order_by") or [], scope, f"{path}.order_by", depth)
    funcs_raw = raw.get("functions")
    if not isinstance(funcs_raw, list) or not funcs_raw:
        raise PlanError("missing_field", "window needs a non-empty functions list", f"{path}.functions")
    funcs = []
    for i, item in enumerate(funcs_raw):
        fpath = f"{path}.functions[{i}]"
        named = b.named(item, scope, fpath, depth, len(scope) + i, _FUNCTION_KEYS)
        cid = b.cid() if named.cid in {f.cid for f in scope} else named.cid
        own = item.get("partition_by")
        part = b.expr_list(own, scope, f"{fpath}.partition_by", depth) if own is not None else None
        frame = read_frame(item.get("frame"), f"{fpath}.frame")
        funcs.append(NamedExpr(named.expr, named.name, cid, None, part, frame))
    return Window(nid, partition, order, tuple(funcs), child)


def _write(node: Window, namer: Namer, write_child: Any) -> dict[str, Any]:
    functions = []
    for f in node.functions:
        item = named_to_wire(f, namer)
        if f.partition_by is not None:
            item["partition_by"] = [expr_to_wire(e, namer) for e in f.partition_by]
        if f.frame is not None:
            item["frame"] = {"kind": f.frame.kind, "start": f.frame.start, "end": f.frame.end}
        functions.append(item)
    return {
        "op": "window",
        "id": node.id,
        "partition_by": [expr_to_wire(e, namer) for e in node.partition_by],
        "order_by": keys_to_wire(node.order_by, namer),
        "functions": functions,
        "input": write_child(node.input),
    }


def _estimate(model: CostModel, node: Window, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    child = kids[0]
    base = (child.base_rows, child.base_ndv)
    return model.make(node, inputs, inputs[0], model.options.k("window"), dict(child.ndv), 0.0, base)


def _fields(node: Window) -> tuple[Field, ...]:
    return output_fields(node.input) + tuple(Field(f.cid, f.name, None) for f in node.functions)


def _expressions(node: Window) -> list[Expr]:
    return list(node.partition_by) + [k.expr for k in node.order_by] + [f.expr for f in node.functions]


def _describe(node: Window, namer: Namer) -> str:
    part = f"partitionBy=[{exprs_text(node.partition_by, namer)}]"
    order = f", orderBy=[{keys_text(node.order_by, namer)}]" if node.order_by else ""
    return f"Window: {part}{order}, functions=[{named_text(node.functions, namer)}]"


KIND: Final = register(
    OperatorKind(
        name="window",
        node_type=Window,
        ops=("window",),
        wire_keys=frozenset({"partition_by", "order_by", "functions", "input"}),
        default_k=3.0,
        output_fields=_fields,
        scope=input_scope,
        expressions=_expressions,
        label="window",
        read=_read,
        wire_children=wire_input,
        write=_write,
        describe=_describe,
        title=lambda node: "Window",
        push_through=push_through_window,
        estimate=_estimate,
        key_equalities=pass_equalities,
        null_supplying=same_null_supplying,
        index_join_through=False,
        renames_columns=True,
    )
)
