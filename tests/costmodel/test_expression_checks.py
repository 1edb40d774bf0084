"""Checks the optimizer makes of every expression (``has_subquery``) and of every answer (its repeated node ids),
against what they mean, on random expressions and plans."""

from __future__ import annotations

import random

from costmodel.expr import Call, Column, Expr, Literal, Subquery, has_subquery, walk
from costmodel.plan import Scan
from costmodel.unique_ids import _all_ids
from tests.costmodel.test_wire_walks import node_objects, random_plan

SCAN = Scan("s", "t")


def random_expr(rng: random.Random, depth: int) -> Expr:
    roll = rng.random()
    if depth <= 0 or roll < 0.35:
        return rng.choice([Column("a", 1), Literal(1, "int")])
    if roll < 0.45:
        return Subquery("exists", SCAN, tuple(random_expr(rng, depth - 1) for _ in range(rng.randint(0, 1))))
    args = tuple(random_expr(rng, depth - 1) for _ in range(rng.randint(0, 3)))
    return Call(rng.choice(["and", "or", "not", "="]), args)


def test_has_subquery_says_whether_a_walk_meets_one() -> None:
    rng = random.Random(11)
    seen = set()
    for _ in range(2000):
        expr = random_expr(rng, rng.randint(0, 6))
        expected = any(isinstance(node, Subquery) for node in walk(expr))
        assert has_subquery(expr) == expected
        seen.add(expected)
    assert seen == {True, False}


def test_all_ids_lists_every_node_id_of_a_plan_and_its_subqueries() -> None:
    rng = random.Random(5)
    for _ in range(300):
        plan = random_plan(rng, rng.randint(0, 5))
        for node in node_objects(plan):  # ids repeated, missing or not strings, as answers may have them
            node["id"] = rng.choice(["n1", "n2", "f1", 7, None])
        expected = [node["id"] for node in node_objects(plan) if isinstance(node["id"], str)]
        assert sorted(_all_ids(plan)) == sorted(expected)
