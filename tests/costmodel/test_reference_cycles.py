"""Optimizing leaves no cyclic garbage: everything a request builds is freed by reference counting.

One recursive closure (a nested function that calls itself holds itself through its cell) kept each
placement's costed plans alive until the cyclic collector found them: about 970 objects per TPC-H plan, and
the collector's walks over them were 6% of the engine's time. These tests fail if such a cycle comes back.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from costmodel import optimize_wire
from tests.correctness.plangen import TABLES, PlanGenerator, catalog, make_rows
from tests.cycles import cyclic_garbage

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"


@pytest.fixture(name="cyclic_garbage")
def cyclic_garbage_check() -> Callable[[Callable[[], Any]], Counter[str]]:
    """Runs a function with the collector paused and says what cyclic garbage it left, by type."""
    return cyclic_garbage


@pytest.mark.parametrize("mode", ["cost", "always", "never"])
def test_tpch_plans_leave_no_cyclic_garbage(
    cyclic_garbage: Callable[[Callable[[], Any]], Counter[str]], mode: str
) -> None:
    tpch_catalog = json.loads((TPCH / "catalog.json").read_text())
    plans = [json.loads(p.read_text()) for p in sorted((TPCH / "plans").glob("q*.json"))]
    assert len(plans) == 22

    def run() -> None:
        for plan in plans:
            assert optimize_wire(plan, tpch_catalog, {"mode": mode})["plan"]

    assert cyclic_garbage(run) == Counter()


def test_generated_plans_leave_no_cyclic_garbage(
    cyclic_garbage: Callable[[Callable[[], Any]], Counter[str]],
) -> None:
    rng = random.Random(20261126)
    generated = catalog({name: make_rows(rng, name, 30) for name in TABLES})
    plans = [PlanGenerator(random.Random(seed)).query() for seed in range(150)]

    def run() -> None:
        for plan in plans:
            assert optimize_wire(plan, generated)["plan"]

    assert cyclic_garbage(run) == Counter()


def test_the_check_sees_a_cycle(cyclic_garbage: Callable[[Callable[[], Any]], Counter[str]]) -> None:
    """The fixture finds a recursive closure's cycle, the kind that was fixed."""

    def run() -> None:
        def countdown(n: int) -> int:
            return 0 if n == 0 else countdown(n - 1)

        countdown(3)

    assert cyclic_garbage(run)["test_the_check_sees_a_cycle.<locals>.run.<locals>.countdown"] == 1
