"""A join's rows: the textbook equi-join estimate on its inputs before their filters, scaled by what they keep.

Estimating on the unfiltered inputs and scaling makes a filter cost the plan
the same rows above the join as below it; placement compares exactly those two.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costmodel.cost import split_join_condition
from costmodel.expr import Column, Expr
from costmodel.joins import JOIN_TYPES
from costmodel.plan import Join, output_cids

if TYPE_CHECKING:
    from costmodel.cost import CostModel, RowEstimate


def _key_divisor(
    model: CostModel,
    lk: Expr,
    rk: Expr,
    left_ndv: dict[int, float],
    right_ndv: dict[int, float],
    left_rows: float,
    right_rows: float,
) -> float:
    """max(NDV left key, NDV right key), the textbook join divisor, with a rule for unknown NDVs.

    A key whose NDV nobody gave carries its table's row count (it may be a primary key). When both
    are guessed, the smaller table is taken for the primary-key side: each row of the other side
    matches one of its rows, so filtering it shrinks the join in proportion. When one is known, it
    is used alone.
    """
    lcid = lk.cid if isinstance(lk, Column) else None
    rcid = rk.cid if isinstance(rk, Column) else None
    ln = left_ndv.get(lcid, left_rows) if lcid is not None else left_rows
    rn = right_ndv.get(rcid, right_rows) if rcid is not None else right_rows
    l_guess = lcid is None or lcid in model.guessed
    r_guess = rcid is None or rcid in model.guessed
    if l_guess and r_guess:
        return min(ln, rn)
    if l_guess:
        return rn
    if r_guess:
        return ln
    return max(ln, rn)


def _inner_rows(
    model: CostModel,
    keys: list[tuple[Expr, Expr]],
    left_rows: float,
    right_rows: float,
    left_ndv: dict[int, float],
    right_ndv: dict[int, float],
) -> float:
    """Matching pairs on the equi-join keys: |L| |R| / max(NDV) per key (the textbook estimate)."""
    if not keys:
        return left_rows * right_rows
    divisor = 1.0
    for lk, rk in keys:
        key_divisor = _key_divisor(model, lk, rk, left_ndv, right_ndv, left_rows, right_rows)
        divisor = max(divisor, key_divisor) if len(keys) == 1 else divisor * max(key_divisor, 1.0)
    return min(left_rows * right_rows / max(divisor, 1.0), left_rows * right_rows)


def estimate_join(model: CostModel, node: Join, kid_ests: list[RowEstimate], inputs: tuple[float, ...]) -> RowEstimate:
    """A join's rows, estimated on its inputs as they would be without any filter below (their base),
    then scaled by the fraction of each input those filters keep.

    So a filter costs the plan the same rows whether it stands above the join or below it: the
    textbook formula on filtered inputs would not agree with a filter applied to the join's output,
    and placement compares exactly those two.
    """
    left, right = kid_ests
    left_rows, right_rows = inputs
    cached = model.join_keys.get(node.id)
    if cached is None or cached[0] is not node.on:
        left_cids = output_cids(node.left)
        cached = (node.on, split_join_condition(node, left_cids))
        model.join_keys[node.id] = cached
    keys, residual = cached[1]
    base_inner = _inner_rows(model, keys, left.base_rows, right.base_rows, left.base_ndv, right.base_ndv)
    left_kept = left_rows / left.base_rows if left.base_rows > 0 else 0.0
    right_kept = right_rows / right.base_rows if right.base_rows > 0 else 0.0
    inner = base_inner * left_kept * right_kept
    extra = 0.0
    for pred in residual:
        s = model.selectivity(pred)
        extra += model.predicate_cost(pred) * inner
        inner *= s
        base_inner *= s
    jtype = node.type
    if jtype in ("inner", "cross"):
        out, base_out = inner, base_inner
    elif jtype == "left":
        out, base_out = max(inner, left_rows), max(base_inner, left.base_rows)
    elif jtype == "right":
        out, base_out = max(inner, right_rows), max(base_inner, right.base_rows)
    elif jtype == "full":
        out = max(inner, left_rows, right_rows)
        base_out = max(base_inner, left.base_rows, right.base_rows)
    else:
        if keys:
            (lk, rk) = keys[0]
            ln = left.base_ndv.get(lk.cid) if isinstance(lk, Column) else None
            rn = right.base_ndv.get(rk.cid) if isinstance(rk, Column) else None
            known = isinstance(lk, Column) and isinstance(rk, Column) and not ({lk.cid, rk.cid} & model.guessed)
            match = min(1.0, rn / ln) if known and ln and rn else 0.5
        else:
            match = 0.5
        base_match = min(match, base_inner / left.base_rows) if left.base_rows else 0.0
        match = min(1.0, base_match * right_kept)  # fewer right rows: fewer left rows find a partner
        out = left_rows * match if jtype == "semi" else left_rows * (1 - match)
        base_out = left.base_rows * (base_match if jtype == "semi" else 1 - base_match)
    ndv = dict(left.ndv)
    base_ndv = dict(left.base_ndv)
    if JOIN_TYPES[jtype].emits_right:
        ndv.update(right.ndv)
        base_ndv.update(right.base_ndv)
    for cid, value in ndv.items():
        if value > out and cid not in model.guessed:
            ndv[cid] = out
    return model.make(node, inputs, out, model.options.k("join"), ndv, extra, (base_out, base_ndv))
