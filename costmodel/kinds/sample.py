"""``sample``: a row sample (``TABLESAMPLE (10 PERCENT) REPEATABLE (7)``, ``df.sample(0.1, seed=7)``); a barrier.

    Filter: a > 1                          (stays where it is)
      Sample: fraction=0.1 method=bernoulli seed=7

A Bernoulli sample keeps each row it receives with probability ``fraction``;
Spark draws one random number per input row, in the order the rows arrive, so
a seeded sample keeps *which* rows depends on every row below it. A filter
moved below it would change the rows it draws for, and so the rows it returns
(the same distribution, other rows): no predicate crosses it, in either
direction (reason ``sample``; Spark's ``PushPredicateThroughNonJoin`` does not
push through ``Sample`` either). A block (``system``) sample keeps whole blocks,
whose make-up a filter below would change (reason ``block_sample``). The
sample keeps ``fraction`` of the rows it receives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from costmodel.errors import PlanError
from costmodel.expr import Expr
from costmodel.kinds.registry import SAME_AS_INPUT, OperatorKind, register
from costmodel.kinds.shape import (
    input_scope,
    no_expressions,
    pass_equalities,
    same_null_supplying,
    wire_input,
)
from costmodel.plan import Node, Sample
from costmodel.reasons import Reason
from costmodel.rules import Blocked, Outcome
from costmodel.wire.names import Namer

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate
    from costmodel.wire.read import Binder

METHODS: Final = ("bernoulli", "system")


def push_through_sample(predicate: Expr, node: Sample) -> Outcome:
    """Never through: below the sample a filter changes which rows a seeded sample keeps (and, read backwards, a
    predicate written below it never rises above it)."""
    if node.method != "bernoulli":
        return Blocked(Reason.BLOCK_SAMPLE, "a block sample keeps whole blocks; a filter below changes what they hold")
    return Blocked(Reason.SAMPLE, "a sample draws one random number per input row: a filter below changes its rows")


def _read(b: Binder, raw: dict[str, Any], path: str, depth: int, nid: str) -> Node:
    child = b.child(raw, "input", path, depth)
    fraction = raw.get("fraction")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise PlanError("invalid_node", "fraction must be a number in (0, 1]", f"{path}.fraction")
    method = raw.get("method", "bernoulli")
    if method not in METHODS:
        raise PlanError(
            "invalid_node", "method must be bernoulli or system", f"{path}.method", {"known": list(METHODS)}
        )
    seed = raw.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise PlanError("invalid_node", "seed must be an integer", f"{path}.seed")
    return Sample(nid, float(fraction), method, seed, child)


def _write(node: Sample, namer: Namer, write_child: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"op": "sample", "id": node.id, "fraction": node.fraction, "method": node.method}
    if node.seed is not None:
        out["seed"] = node.seed
    out["input"] = write_child(node.input)
    return out


def _describe(node: Sample, namer: Namer) -> str:
    seed = f" seed={node.seed}" if node.seed is not None else ""
    return f"Sample: fraction={node.fraction:g} method={node.method}{seed}"


def _estimate(model: CostModel, node: Sample, kids: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    """``fraction`` of the rows; below it, the rows a join sees are sampled too."""
    child = kids[0]
    out = inputs[0] * node.fraction
    ndv = {cid: min(value, max(out, 1.0)) for cid, value in child.ndv.items()}
    base = (child.base_rows * node.fraction, child.base_ndv)
    return model.make(node, inputs, out, model.options.k("sample"), ndv, 0.0, base)


KIND: Final = register(
    OperatorKind(
        name="sample",
        node_type=Sample,
        ops=("sample",),
        wire_keys=frozenset({"fraction", "method", "seed", "input"}),
        default_k=1.0,
        output_fields=SAME_AS_INPUT,
        scope=input_scope,
        expressions=no_expressions,
        label="sample",
        read=_read,
        wire_children=wire_input,
        write=_write,
        describe=_describe,
        title=lambda node: "Sample",
        push_through=push_through_sample,
        estimate=_estimate,
        key_equalities=pass_equalities,
        null_supplying=same_null_supplying,
        index_join_through=False,
        renames_columns=False,
    )
)
