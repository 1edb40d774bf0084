"""``same_tree`` answers what sqlglot's ``==`` answers, on every pair of same-class nodes of real queries."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from service.sql.same_tree import same_tree
from tests.roundtrip.test_sql_plan_sql import generated

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch" / "queries"

#: pairs compared per query and class at most (a query's columns alone make thousands of pairs)
PAIRS_PER_CLASS = 60


def _queries() -> list[str]:
    return [p.read_text() for p in sorted(TPCH.glob("q*.sql"))] + list(generated(150, 24))


def _pairs(tree: exp.Expr, rng: random.Random) -> list[tuple[exp.Expr, exp.Expr]]:
    """Pairs of nodes of one class from ``tree`` and from a second parse of it (equal nodes, other objects)."""
    by_class: dict[type, list[exp.Expr]] = {}
    for node in tree.walk():
        by_class.setdefault(type(node), []).append(node)
    out: list[tuple[exp.Expr, exp.Expr]] = []
    for nodes in by_class.values():
        pairs = list(itertools.combinations(nodes, 2))
        rng.shuffle(pairs)
        out += pairs[:PAIRS_PER_CLASS]
    return out


@pytest.mark.parametrize("hashed", [False, True], ids=["fresh", "one side hashed"])
def test_same_tree_agrees_with_sqlglot_equality(hashed: bool) -> None:
    rng = random.Random(24)
    checked = equal = 0
    for sql in _queries():
        tree = sqlglot.parse_one(sql, read="spark")
        again = sqlglot.parse_one(sql.upper() if rng.random() < 0.3 else sql, read="spark")
        pairs = _pairs(tree, rng) + list(zip(tree.walk(), again.walk(), strict=False))
        for a, b in pairs:
            if hashed:
                hash(a)  # the side already hashed takes the other path for it
            fresh_a, fresh_b = a.copy(), b.copy()  # hashing caches: compare copies not hashed yet
            if hashed:
                hash(fresh_a)
            expected = a == b
            assert same_tree(fresh_a, fresh_b) == expected, f"{a.sql()!r} vs {b.sql()!r}"
            checked += 1
            equal += expected
    # both answers occur often: the comparison is not trivially one-sided
    assert checked > 10_000 and 0.1 < equal / checked < 0.9, (checked, equal)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("FOO(a, 1)", "foo(a, 1)"),  # an unknown function's name: text compared without case
        ("FOO(a, 1)", "FOO(a, 2)"),
        ("a.x", "A.X"),  # names are hashed raw: case counts
        ("'A'", "'a'"),
        ("CAST(x AS DECIMAL(10, 2))", "cast(x as decimal(10, 2))"),
        ("x IN (1, 2)", "x IN (1, 2, 3)"),
        ("SUM(x) OVER (PARTITION BY a ORDER BY b)", "SUM(x) OVER (PARTITION BY a ORDER BY b DESC)"),
        ("COUNT(DISTINCT x)", "COUNT(x)"),
        ("INTERVAL '3' MONTH", "INTERVAL '3' month"),
    ],
)
def test_same_tree_on_spellings(left: str, right: str) -> None:
    a, b = sqlglot.parse_one(left, read="spark"), sqlglot.parse_one(right, read="spark")
    assert same_tree(a, b) == (a == b)
    assert same_tree(a, a.copy()) and same_tree(b, b.copy())
