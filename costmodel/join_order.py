"""Inner joins in the order Spark runs them: Catalyst's ``ReorderJoin`` without statistics.

A query that joins with commas (``FROM a, b, c WHERE a.k = c.k AND b.j = c.j``) leaves the order of its inner
joins to the engine. Read as written, ``a`` and ``b`` meet in a cross product; Catalyst never runs that: its
``ReorderJoin`` flattens a left-deep chain of inner joins (with the filter right above it) and joins, from the
first input, the first input in written order that some condition connects to what is joined so far, and only
when none is connected the next one as written. Deciding on the written order priced cross products the engine
never runs, and made the model prefer placements that only look cheap against them.

So before anything is decided, each such chain is put in that order: the same inputs, the same conditions, one
join per input, each join given the conditions of its ``ON`` clauses that its inputs can evaluate; a ``WHERE``
conjunct stays in its filter (placement then puts it into the join it connects, as Catalyst does). Join ids
keep their level in the chain, top to bottom. A chain is reordered only below a projection or an aggregate
(directly or through its filter), which read columns by identity, so the column order the join emits changes
nothing above it; anything else keeps the written order.

    >>> from costmodel.expr import Call, Column
    >>> from costmodel.plan import Scan, Field, Project, NamedExpr
    >>> a, b, c = (Scan(n, n, fields=(Field(i, f"{n}.k"),)) for i, n in enumerate("abc"))
    >>> joined = Join("j2", "cross", None, Join("j1", "cross", None, a, b), c)
    >>> ak, bk, ck = (Column(f"{n}.k", i) for i, n in enumerate("abc"))
    >>> where = Filter("f", Call("and", (Call("=", (ak, ck)), Call("=", (bk, ck)))), joined)
    >>> plan = catalyst_join_order(Project("p", (NamedExpr(ak, "k"),), where))
    >>> [leaf.id for leaf in _leaves(plan.input.input)]
    ['a', 'c', 'b']
"""

from __future__ import annotations

from typing import Final

from costmodel.expr import Expr, and_, column_ids, conjuncts, has_subquery, is_deterministic
from costmodel.plan import Aggregate, Filter, Join, Node, Project, children, output_cids, walk_plan, with_children

#: join types Catalyst reorders (``InnerLike``)
_INNER: Final = frozenset({"inner", "cross"})


def catalyst_join_order(plan: Node) -> Node:
    """``plan`` with every reorderable chain of three or more inner joins in Catalyst's order; ``plan`` itself
    (the same object) when no chain's order changes."""
    if not any(_chain_top(node) is not None for node in walk_plan(plan)):
        return plan
    try:
        return _reordered(plan)
    except RecursionError:  # a plan nested deeper than Python's stack keeps its written order
        return plan


def _chain_top(node: Node) -> Join | None:
    """The top join of a chain directly under ``node`` (a projection or aggregate, possibly through a filter)
    that Catalyst would reorder: at least three inputs and at least one condition."""
    if not isinstance(node, (Project, Aggregate)):
        return None
    below = node.input.input if isinstance(node.input, Filter) else node.input
    if not _in_chain(below):
        return None
    assert isinstance(below, Join)
    return below if len(_leaves(below)) > 2 else None


def _in_chain(node: Node) -> bool:
    return isinstance(node, Join) and node.type in _INNER and not node.null_aware


def _leaves(top: Join) -> list[Node]:
    """The chain's inputs in written order (left-deep: every right input is a leaf, as Catalyst flattens it)."""
    out: list[Node] = []
    node: Node = top
    while _in_chain(node):
        assert isinstance(node, Join)
        out.append(node.right)
        node = node.left
    out.append(node)
    return out[::-1]


def _joins(top: Join) -> list[Join]:
    """The chain's joins, top to bottom."""
    out: list[Join] = []
    node: Node = top
    while _in_chain(node):
        assert isinstance(node, Join)
        out.append(node)
        node = node.left
    return out


def _reordered(node: Node) -> Node:
    kids = children(node)
    new_kids: list[Node] = []
    for kid in kids:
        top = _chain_top(node)
        if top is not None and (kid is top or (isinstance(kid, Filter) and kid.input is top)):
            where = conjuncts(kid.predicate) if isinstance(kid, Filter) else []
            chain = _ordered_chain(top, where)
            new_kids.append(kid.with_children([chain]) if isinstance(kid, Filter) else chain)
        else:
            new_kids.append(_reordered(kid))
    if all(a is b for a, b in zip(new_kids, kids, strict=True)):
        return node
    return with_children(node, new_kids)


def _ordered_chain(top: Join, where: list[Expr]) -> Node:
    """The chain under ``top`` rebuilt in Catalyst's order (its inputs reordered inside first)."""
    written = _leaves(top)
    leaves = [_reordered(leaf) for leaf in written]
    joins = _joins(top)
    on = [part for join in joins if join.on is not None for part in conjuncts(join.on)]
    order = leaves
    # has_subquery first: is_deterministic walks a subquery's whole plan, and such a part is not usable anyway
    if all(not has_subquery(part) and is_deterministic(part) for part in on):
        usable = [part for part in on + where if not has_subquery(part) and is_deterministic(part)]
        order = _catalyst_order(leaves, usable)
    if all(a is b for a, b in zip(order, leaves, strict=True)):
        return _with_leaves(joins, leaves) if any(a is not b for a, b in zip(leaves, written, strict=True)) else top
    return _left_deep(order, joins, on)


def _with_leaves(joins: list[Join], leaves: list[Node]) -> Node:
    """The chain as written over new inputs."""
    node = leaves[0]
    for join, leaf in zip(reversed(joins), leaves[1:], strict=True):
        node = join.with_children([node, leaf])
    return node


def _catalyst_order(leaves: list[Node], conditions: list[Expr]) -> list[Node]:
    """``ReorderJoin.createOrderedJoin``'s order: from the first input, repeatedly the first remaining input that a
    condition connects to what is joined so far (a condition reading only one of the two does not count), else
    the next one as written."""
    cids = [output_cids(leaf) for leaf in leaves]
    refs = [column_ids(part) for part in conditions]
    remaining = list(range(1, len(leaves)))
    order = [0]
    joined = set(cids[0])
    while remaining:
        nxt = next((i for i in remaining if _connects(joined, cids[i], refs)), remaining[0])
        remaining.remove(nxt)
        order.append(nxt)
        joined |= cids[nxt]
    return [leaves[i] for i in order]


def _connects(joined: set[int], cids: frozenset[int], refs: list[frozenset[int]]) -> bool:
    """Some condition reads both what is joined so far and the input ``cids``, and nothing else."""
    return any(r and r <= (joined | cids) and not r <= joined and not r <= cids for r in refs)


def _left_deep(order: list[Node], joins: list[Join], on: list[Expr]) -> Node:
    """A left-deep chain over ``order``; each join takes the ``ON`` conjuncts first evaluable at it (ids by level,
    the bottom join's id at the bottom)."""
    pending = list(on)
    node = order[0]
    cids = set(output_cids(node))
    for level, leaf in enumerate(order[1:]):
        cids |= output_cids(leaf)
        last = level == len(order) - 2
        here = [part for part in pending if last or column_ids(part) <= cids]
        pending = [part for part in pending if not any(part is h for h in here)]
        original = joins[len(joins) - 1 - level]
        node = Join(original.id, "inner" if here else "cross", and_(here) if here else None, node, leaf)
    return node
