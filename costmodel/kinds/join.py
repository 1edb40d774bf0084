"""``join`` (inner, left, right, full, semi, anti, cross): ``on`` is its condition; ``null_aware`` marks NOT IN."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.expr import Column, Expr
from costmodel.joins import JOIN_TYPES
from costmodel.kinds.join_rows import estimate_join
from costmodel.kinds.registry import OperatorKind, register
from costmodel.plan import Field, Join, Node, output_fields
from costmodel.render import to_sql
from costmodel.rules.infer_join_keys import column_pairs
from costmodel.rules.join import push_through_join
from costmodel.wire.names import Namer
from costmodel.wire.write import expr_to_wire

if TYPE_CHECKING:
    from costmodel.wire.read import Binder


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    left = b.child(raw, "left", path, depth)
    right = b.child(raw, "right", path, depth)
    jtype = str(raw.get("type", "inner")).lower()
    if jtype not in JOIN_TYPES:
        raise PlanError("invalid_node", f"unknown join type {jtype!r}", f"{path}.type", {"known": list(JOIN_TYPES)})
    on_raw = raw.get("on")
    on = None
    scope = b.scopes.joined(output_fields(left), output_fields(right))  # indexed from the inputs' indexes
    if on_raw is not None:
        on = b.expr(on_raw, scope, f"{path}.on", depth + 1)
    null_aware = raw.get("null_aware", False)
    if not isinstance(null_aware, bool):
        raise PlanError("invalid_node", "null_aware must be true or false", f"{path}.null_aware")
    node = Join(nid, jtype, on, left, right, null_aware)
    b.scopes.same_as(output_fields(node), scope)  # what the join emits is its scope when it emits both sides
    return node


def _wire_children(raw: dict[str, Any], path: str) -> list[tuple[Any, str]]:
    return [(raw[key], f"{path}.{key}") for key in ("left", "right") if key in raw]


def _write(node: Join, namer: Namer, write_child: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "op": "join",
        "id": node.id,
        "type": node.type,
        "on": expr_to_wire(node.on, namer) if node.on is not None else None,
    }
    if node.null_aware:
        out["null_aware"] = True
    out["left"] = write_child(node.left)
    out["right"] = write_child(node.right)
    return out


def _title(node: Join) -> str:
    return f"{node.type.capitalize()} Join" + (" (null-aware)" if node.null_aware else "")


def _describe(node: Join, namer: Namer) -> str:
    on = f" {to_sql(node.on, namer)}" if node.on is not None else ""
    return f"{_title(node)}:{on}"


def _fields(node: Join) -> tuple[Field, ...]:
    left = output_fields(node.left)
    return left + output_fields(node.right) if JOIN_TYPES[node.type].emits_right else left


def _scope(node: Join) -> tuple[Field, ...]:
    return output_fields(node.left) + output_fields(node.right)


def _expressions(node: Join) -> list[Expr]:
    return [node.on] if node.on is not None else []


def _key_equalities(node: Join) -> tuple[list[tuple[Column, Column]], tuple[Node, ...]]:
    """Inner joins hold their key equalities on every row; only a preserved side's rows keep their values."""
    jtype = JOIN_TYPES[node.type]
    sides = (node.left, node.right)
    return (column_pairs(node) if jtype.keys_hold_on_output else []), tuple(sides[i] for i in jtype.passes_rows_of)


def _null_supplying(node: Join, null_supplying: bool) -> tuple[bool, ...]:
    padded = JOIN_TYPES[node.type].null_supplied
    return (null_supplying or 0 in padded, null_supplying or 1 in padded)


KIND: Final = register(
    OperatorKind(
        name="join",
        node_type=Join,
        ops=("join",),
        wire_keys=frozenset({"type", "on", "null_aware", "left", "right"}),
        default_k=4.0,
        output_fields=_fields,
        scope=_scope,
        expressions=_expressions,
        label="join",
        read=_read,
        wire_children=_wire_children,
        write=_write,
        describe=_describe,
        title=_title,
        push_through=push_through_join,
        estimate=estimate_join,
        key_equalities=_key_equalities,
        null_supplying=_null_supplying,
        index_join_through=False,
        renames_columns=False,
    )
)
