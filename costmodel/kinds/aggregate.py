"""``aggregate``: one row per group of ``group_by`` keys, computing ``aggregates``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.expr import Column, Expr
from costmodel.kinds.registry import OperatorKind, register
from costmodel.kinds.shape import (
    fields_of,
    input_scope,
    pass_equalities,
    same_null_supplying,
    wire_input,
)
from costmodel.kinds.text import named_text
from costmodel.plan import Aggregate, Node, output_fields
from costmodel.rules.aggregate import push_through_aggregate
from costmodel.wire.names import Namer
from costmodel.wire.write import expr_to_wire, named_to_wire

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    child = b.child(raw, "input", path, depth)
    scope = output_fields(child)
    group_raw = raw.get("group_by") or []
    aggs_raw = raw.get("aggregates") or []
    if not isinstance(group_raw, list) or not isinstance(aggs_raw, list):
        raise PlanError("invalid_node", "group_by and aggregates must be lists", path)
    keys = []
    for i, item in enumerate(group_raw):  # a key is an expression, or {"expr", "as"} when it is named
        item = item if isinstance(item, dict) and "expr" in item else {"expr": item}
        keys.append(b.named(item, scope, f"{path}.group_by[{i}]", depth, i))
    aggs = tuple(b.named(a, scope, f"{path}.aggregates[{i}]", depth, len(keys) + i) for i, a in enumerate(aggs_raw))
    return Aggregate(nid, tuple(keys), aggs, child, _grouping_sets(raw, len(keys), path))


def _grouping_sets(raw: dict[str, Any], n_keys: int, path: str) -> tuple[tuple[int, ...], ...] | None:
    """``grouping_sets``: a list of sets, each a list of indexes into ``group_by``."""
    sets = raw.get("grouping_sets")
    if sets is None:
        return None
    if not isinstance(sets, list) or not sets:
        raise PlanError("invalid_node", "grouping_sets must be a non-empty list of lists", f"{path}.grouping_sets")
    out = []
    for i, grouping in enumerate(sets):
        ok = isinstance(grouping, list) and all(
            isinstance(k, int) and not isinstance(k, bool) and 0 <= k < n_keys for k in grouping
        )
        if not ok:
            raise PlanError(
                "invalid_node",
                f"a grouping set lists indexes into group_by (0 to {n_keys - 1})",
                f"{path}.grouping_sets[{i}]",
            )
        out.append(tuple(sorted(set(grouping))))
    return tuple(out)


def _write(node: Aggregate, namer: Namer, write_child: Any) -> dict[str, Any]:
    return {
        "op": "aggregate",
        "id": node.id,
        "group_by": [
            expr_to_wire(k.expr, namer)
            if isinstance(k.expr, Column) and k.cid == k.expr.cid
            else named_to_wire(k, namer)
            for k in node.group_by
        ],
        "aggregates": [named_to_wire(a, namer) for a in node.aggregates],
        **({"grouping_sets": [list(g) for g in node.grouping_sets]} if node.grouping_sets is not None else {}),
        "input": write_child(node.input),
    }


def _estimate(model: CostModel, node: Aggregate, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    """Groups = product of the keys' NDVs, capped by the rows in; one row without keys."""
    rows_in = inputs[0]

    def groups_of(keys: tuple[Any, ...]) -> float:
        """Groups one grouping emits: the product of its keys' NDVs, at most the rows in; 1 without keys."""
        if not keys:
            return 1.0
        groups = 1.0
        for key in keys:
            guess = model.expr_ndv(key.expr, kids[0].ndv)
            groups *= guess if guess is not None else rows_in
            if groups >= rows_in:
                break
        return min(rows_in, groups)

    if node.grouping_sets is None:
        out = groups_of(node.group_by)
    else:  # every grouping set emits its own groups (ROLLUP (a, b): groups of (a, b), of (a), and 1)
        out = sum(groups_of(tuple(node.group_by[i] for i in s)) for s in node.grouping_sets)
    ndv = {}
    for key in node.group_by:
        guess = model.expr_ndv(key.expr, kids[0].ndv)
        if guess is not None:
            ndv[key.cid] = min(guess, out)
    return model.make(node, inputs, out, model.options.k("aggregate"), ndv)


def _key_equalities(node: Aggregate) -> tuple[list[tuple[Column, Column]], tuple[Node, ...]]:
    """Equalities below hold on its rows, except on grouping sets' subtotal rows, whose keys are NULL."""
    return pass_equalities(node) if node.grouping_sets is None else ([], ())


def _expressions(node: Aggregate) -> list[Expr]:
    return [e.expr for e in node.group_by + node.aggregates]


def _describe(node: Aggregate, namer: Namer) -> str:
    sets = "" if node.grouping_sets is None else f", groupingSets={[list(g) for g in node.grouping_sets]}"
    return f"Aggregate: groupBy=[{named_text(node.group_by, namer)}], aggr=[{named_text(node.aggregates, namer)}]{sets}"


KIND: Final = register(
    OperatorKind(
        name="aggregate",
        node_type=Aggregate,
        ops=("aggregate",),
        wire_keys=frozenset({"group_by", "aggregates", "grouping_sets", "input"}),
        default_k=4.0,
        output_fields=lambda node: fields_of(node.group_by + node.aggregates),
        scope=input_scope,
        expressions=_expressions,
        label="aggregate",
        read=_read,
        wire_children=wire_input,
        write=_write,
        describe=_describe,
        title=lambda node: "Aggregate",
        push_through=push_through_aggregate,
        estimate=_estimate,
        key_equalities=_key_equalities,
        null_supplying=same_null_supplying,
        index_join_through=False,
        renames_columns=True,
    )
)
