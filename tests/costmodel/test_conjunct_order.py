"""Conjunct order: rank order, guards and walls kept."""

from __future__ import annotations

import random

from costmodel.conjunct_order import rank, ranked
from costmodel.expr import Call, Column, Literal

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
