"""Conjunct order: rank order, guards and walls kept."""

from __future__ import annotations

import random

from costmodel.conjunct_order import _greedy, in_rank_order, rank, ranked
from costmodel.expr import Call, Column, Expr, Literal

A, B = Column("a", 1, "int"), Column("b", 2, "int")
COIN = Call("<", (Call("rand", ()), Literal(0.5, "double")))
CHEAP = Call("=", (B, Literal(1, "int")))
UNDECLARED = Call(">", (Call("my_udf", (A,), opaque=True), Literal(1, "int")))
RISKY = Call(">", (Call("/", (B, A)), Literal(1, "int")))
GUARD = Call("!=", (A, Literal(0, "int")))


def test_nothing_passes_a_non_deterministic_conjunct():
    assert ranked([COIN, CHEAP], lambda c: 100.0 if c is COIN else 1.0, lambda c: 0.5) == [COIN, CHEAP]


def test_nothing_passes_an_undeclared_function():
    assert ranked([UNDECLARED, CHEAP], lambda c: 100.0 if c is UNDECLARED else 1.0, lambda c: 0.5) == [
        UNDECLARED,
        CHEAP,
    ]


def test_a_conjunct_that_can_raise_stays_behind_its_guard_and_others_go_by_rank():
    expensive = Call(">", (Call("length", (Column("s", 3, "string"),)), Literal(3, "int")))
    costs = {id(GUARD): 50.0, id(RISKY): 1.0, id(CHEAP): 1.0, id(expensive): 20.0}
    sels = {id(GUARD): 0.9, id(RISKY): 0.5, id(CHEAP): 0.1, id(expensive): 0.5}
    out = ranked([GUARD, RISKY, expensive, CHEAP], lambda c: costs[id(c)], lambda c: sels[id(c)])
    assert out.index(GUARD) < out.index(RISKY)
    assert out[0] is CHEAP


def test_cheapest_per_dropped_row_first():
    parts = [Call(">", (A, Literal(i, "int"))) for i in range(6)]
    rng = random.Random(7)
    costs = {id(p): rng.uniform(1, 100) for p in parts}
    sels = {id(p): rng.uniform(0, 0.99) for p in parts}
    out = ranked(parts, lambda c: costs[id(c)], lambda c: sels[id(c)])
    ranks = [rank(costs[id(p)], sels[id(p)]) for p in out]
    assert ranks == sorted(ranks) and sorted(map(id, out)) == sorted(map(id, parts))


def test_conjuncts_already_in_rank_order_are_kept_as_written_whatever_is_pinned():
    """``in_rank_order`` lets ``ranked`` skip its walks for pins and walls: the greedy order it skips must be the
    order as written on every such conjunction, guards, walls and risky conjuncts anywhere in it."""
    pool = [COIN, CHEAP, UNDECLARED, RISKY, GUARD] + [Call(">", (A, Literal(i, "int"))) for i in range(4)]
    rng = random.Random(11)
    for _ in range(300):
        parts = rng.sample(pool, rng.randint(2, len(pool)))
        ranks = sorted(rng.choice([0.5, 1.0, 2.0, 2.0, 40.0]) for _ in parts)  # ties included
        costs = {id(p): r * 0.5 for p, r in zip(parts, ranks, strict=True)}  # selectivity 0.5: rank = 2 x cost

        def cost(c: Expr, costs: dict[int, float] = costs) -> float:
            return costs[id(c)]

        assert in_rank_order(parts, cost, _half)
        assert _greedy(parts, cost, _half) == parts == ranked(parts, cost, _half)


def _half(c: Expr) -> float:
    return 0.5


def test_conjuncts_out_of_rank_order_are_not_taken_for_ordered():
    costs = {id(CHEAP): 5.0, id(GUARD): 1.0}
    assert not in_rank_order([CHEAP, GUARD], lambda c: costs[id(c)], lambda c: 0.5)
    assert ranked([CHEAP, GUARD], lambda c: costs[id(c)], lambda c: 0.5) == [GUARD, CHEAP]
