"""One bottom-up walk for values of a node's output columns that chains share instead of rebuilding
(``output_cids``, the writer's name indexes): explicit stack, remembered per node, linear in a join chain."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from costmodel.plan import Field, Join, Node, children, output_fields

T = TypeVar("T")


def shared_bottom_up(
    node: Node,
    memo: dict[int, tuple[Node, T]],
    own: Callable[[tuple[Field, ...]], T],
    unite: Callable[[Join, T, T], T | None],
) -> T:
    """A value of ``node``'s output columns, built bottom-up with an explicit stack and remembered per node in
    ``memo``: a node passing an input's columns shares that input's value, a join ``unite``s its inputs' (None:
    build its own), any other node builds its own from its fields with ``own``. Shared, so a chain stays linear.
    """
    hit = memo.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        current, ready = stack.pop()
        hit = memo.get(id(current))
        if hit is not None and hit[0] is current:
            continue
        fields = output_fields(current)
        kids = children(current)
        passed = [kid for kid in kids if output_fields(kid) is fields]
        parts = passed[:1] or (list(kids) if isinstance(current, Join) else [])
        if not ready and parts:
            stack.append((current, True))
            stack.extend((kid, False) for kid in parts)
            continue
        value: T | None = None
        if passed:
            value = memo[id(passed[0])][1]
        elif isinstance(current, Join):
            value = unite(current, memo[id(kids[0])][1], memo[id(kids[1])][1])
        memo[id(current)] = (current, own(fields) if value is None else value)
    return memo[id(node)][1]
