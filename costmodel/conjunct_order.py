"""Conjuncts in rank order: within a filter (and a scan's filter list), cheapest per dropped row first.

An engine that evaluates a conjunction left to right, stopping at the first false, spends on each row the cost
of the conjuncts up to the first that drops it. Ordering by rank, ``cost / (1 - selectivity)``, ascending
minimises that expected cost for independent conjuncts (the classic result behind DuckDB's static ordering and
Velox's and DataFusion's adaptive one): a cheap test that drops many rows goes before an expensive one.

The order the query gives is kept where it may matter for correctness: a conjunct that can raise, that is
non-deterministic or that calls a function nobody declared stays behind every conjunct written before it (those
may guard it: ``x <> 0 AND y / x > 1``), and nothing moves ahead of a non-deterministic or undeclared one.

    >>> from costmodel.expr import Call, Column, Literal
    >>> x, y = Column("x", 1, "int"), Column("y", 2, "int")
    >>> guard = Call("!=", (x, Literal(0, "int")))
    >>> risky = Call(">", (Call("/", (y, x)), Literal(1, "int")))
    >>> [c.fn for c in ranked([risky, guard], lambda c: 1.0, lambda c: 0.5)]  # no guard written before it
    ['>', '!=']
    >>> [c.fn for c in ranked([guard, risky], lambda c: 5.0 if c.fn == "!=" else 1.0, lambda c: 0.5)]
    ['!=', '>']
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heapify, heappop, heappush
from itertools import pairwise
from typing import Any

from costmodel.expr import Expr, and_, conjuncts, is_deterministic
from costmodel.expr_raise import can_raise
from costmodel.plan import Filter, Node, Scan, children, with_children
from costmodel.render import to_sql
from costmodel.rounding import rounded


def rank(cost: float, selectivity: float) -> float:
    """Cost per row dropped; a conjunct that drops nothing ranks last."""
    dropped = 1.0 - selectivity
    return cost / dropped if dropped > 0 else float("inf")


def _pinned(part: Expr) -> bool:
    """Must stay behind every conjunct written before it (``is_deterministic`` is false for a call nobody declared,
    so that needs no walk of its own)."""
    return can_raise(part) or not is_deterministic(part)


def ranked(parts: list[Expr], cost: Callable[[Expr], float], selectivity: Callable[[Expr], float]) -> list[Expr]:
    """``parts`` in rank order, each pinned conjunct behind the ones written before it (stable on ties).

    Greedy by rank over the conjuncts free to go next: every unpinned one of the current stretch (up to the next
    wall: a non-deterministic or undeclared conjunct, which nothing passes) and a pinned one once everything
    before it has gone."""
    if len(parts) < 2 or in_rank_order(parts, cost, selectivity):
        return list(parts)
    return _greedy(parts, cost, selectivity)


def _greedy(parts: list[Expr], cost: Callable[[Expr], float], selectivity: Callable[[Expr], float]) -> list[Expr]:
    """``ranked``'s order, stretch by stretch between walls."""
    out: list[Expr] = []
    start = 0
    while start < len(parts):
        end = next((i for i in range(start + 1, len(parts)) if _wall(parts[i])), len(parts))
        if _wall(parts[start]):  # a stretch starts at its wall, which goes first: nothing passes it
            out.append(parts[start])
            start += 1
        out.extend(_ranked_stretch(parts[start:end], cost, selectivity))
        start = end
    return out


def in_rank_order(parts: list[Expr], cost: Callable[[Expr], float], selectivity: Callable[[Expr], float]) -> bool:
    """Whether each conjunct's rank is at most the next one's: ``ranked`` then keeps the order as written, so the
    walks that find pinned conjuncts and walls need not run. Safe because a pin or a wall only ever holds a
    conjunct back, never moves one ahead: with ranks in order, the greedy pick at each step is the first conjunct
    not yet placed (it ranks lowest, and a tie goes to the lower index). A NaN rank compares false: ranked in full.

    >>> in_rank_order([1, 2, 3], float, lambda c: 0.5), in_rank_order([2, 1], float, lambda c: 0.5)
    (True, False)
    """
    ranks = [rank(cost(p), selectivity(p)) for p in parts]
    return all(a <= b for a, b in pairwise(ranks))


def _wall(part: Expr) -> bool:
    """Nothing written after it may pass it: a non-deterministic conjunct, or one calling a function nobody
    declared (which may be non-deterministic): ``is_deterministic`` is false for both."""
    return not is_deterministic(part)


def _ranked_stretch(
    parts: list[Expr], cost: Callable[[Expr], float], selectivity: Callable[[Expr], float]
) -> list[Expr]:
    pinned = [_pinned(p) for p in parts]
    ranks = [rank(cost(p), selectivity(p)) for p in parts]
    ready = [(ranks[i], i) for i in range(len(parts)) if not pinned[i] or i == 0]
    queued = {i for _, i in ready}
    heapify(ready)
    gone = [False] * len(parts)
    first = 0  # the lowest index not yet gone
    out: list[Expr] = []
    while ready:
        _, i = heappop(ready)
        out.append(parts[i])
        gone[i] = True
        while first < len(parts) and gone[first]:
            first += 1
        if first < len(parts) and first not in queued:  # pinned, and everything before it has gone
            queued.add(first)
            heappush(ready, (ranks[first], first))
    return out


def order_conjuncts(
    plan: Node, cost: Callable[[Expr], float], selectivity: Callable[[Expr], float]
) -> tuple[Node, list[dict[str, Any]]]:
    """``plan`` with every filter's and scan's conjuncts in rank order, and a rewrite entry per node whose order
    changed (each conjunct with its cost, selectivity and rank, in the new order)."""
    changes: list[dict[str, Any]] = []
    rebuilt: dict[int, Node] = {}
    order: list[Node] = []
    stack = [plan]
    while stack:  # children before parents, with an explicit stack (a plan may be 10,000 levels deep)
        node = stack.pop()
        order.append(node)
        stack.extend(children(node))
    for node in reversed(order):
        kids = [rebuilt[id(kid)] for kid in children(node)]
        new = with_children(node, kids) if any(a is not b for a, b in zip(kids, children(node), strict=True)) else node
        if isinstance(new, Filter):
            parts = conjuncts(new.predicate)
            again = ranked(parts, cost, selectivity)
            if _moved(parts, again):
                new = Filter(new.id, and_(again), new.input)
                changes.append(_entry(new.id, again, cost, selectivity))
        elif isinstance(new, Scan) and len(new.filters) > 1:
            parts = [c for f in new.filters for c in conjuncts(f)]
            again = ranked(parts, cost, selectivity)
            if _moved(parts, again):
                new = new.with_filters(tuple(again))
                changes.append(_entry(new.id, again, cost, selectivity))
        rebuilt[id(node)] = new
    return rebuilt[id(plan)], changes


def _moved(before: list[Expr], after: list[Expr]) -> bool:
    return any(a is not b for a, b in zip(before, after, strict=True))


def _entry(
    node_id: str, parts: list[Expr], cost: Callable[[Expr], float], selectivity: Callable[[Expr], float]
) -> dict[str, Any]:
    return {
        "rule": "conjunct_order",
        "operator": node_id,
        "order": [
            {
                "predicate": to_sql(p),
                "cost": rounded(cost(p), 6),
                "selectivity": rounded(selectivity(p), 6),
                "rank": _finite(rank(cost(p), selectivity(p))),
            }
            for p in parts
        ],
    }


def _finite(value: float) -> float | None:
    """A rank for the answer's JSON: None for a conjunct that drops nothing (infinite rank)."""
    return rounded(value, 6) if value != float("inf") else None
