"""Deep plans and expressions are answered at Python's default recursion limit; nothing raises the limit.

Every walk over plans and expressions in the engine is iterative (explicit stacks, or generators driven
by ``costmodel.trampoline``), so a 10,000-level plan or expression costs heap, not interpreter frames.
Times are bench/scaling.py's business, not these tests'.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from costmodel import PlanError, optimize_wire
from costmodel.wire import read
from tests.costmodel.dsl import c, filter_, project, scan, table

ROOT = Path(__file__).resolve().parents[2]
CATALOG = {"tables": {"t": table(["a", "b"], rows=100)}}
LEVELS = 10_000


@pytest.fixture(autouse=True)
def default_recursion_limit() -> Iterator[None]:
    """Python's default limit, whatever ran before in this process."""
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def _scan_under(plan: dict[str, Any]) -> dict[str, Any]:
    while plan["op"] != "scan":
        plan = plan["input"]
    return plan


def test_a_10000_level_plan_is_answered() -> None:
    plan: dict[str, Any] = scan("t")
    for _ in range(LEVELS):
        plan = project(plan, a=c("a"), b=c("b"))
    plan = filter_(plan, c("a") > 5)
    answer = optimize_wire(plan, CATALOG)
    assert _scan_under(answer["plan"])["filters"] == [{"fn": ">", "args": [{"col": "a"}, {"lit": 5, "type": "int"}]}]
    pushed = [d for d in answer["decisions"] if d["action"] == "pushed"]
    assert len(pushed) == LEVELS + 1  # through every project, then into the scan
    assert answer["explain"]["after"].count("\n") == LEVELS


def test_a_10000_level_chain_of_filters_is_answered() -> None:
    plan: dict[str, Any] = scan("t")
    for i in range(LEVELS):
        plan = filter_(plan, c("a") != i)
    answer = optimize_wire(plan, CATALOG)
    assert len(answer["plan"]["filters"]) == LEVELS
    assert answer["plan"]["filters"][0] == {"fn": "!=", "args": [{"col": "a"}, {"lit": 0, "type": "int"}]}


def test_a_10000_level_expression_is_answered() -> None:
    value: Any = c("a")
    for i in range(LEVELS):
        value = value + i
    answer = optimize_wire(filter_(scan("t"), value > 5), CATALOG)
    written = answer["plan"]["filters"][0]
    depth = 0
    while "fn" in written:  # > then + ... + then the column
        written, depth = written["args"][0], depth + 1
    assert written == {"col": "a"} and depth == LEVELS + 1
    text = answer["decisions"][0]["predicate"]
    assert text.startswith("a + 0 + 1 + 2 + ") and text.endswith(f" + {LEVELS - 1} > 5")


def test_a_10000_level_boolean_expression_is_folded_and_answered() -> None:
    predicate: Any = (c("a") > 1).d
    for _ in range(LEVELS):
        predicate = {"fn": "not", "args": [predicate]}
    answer = optimize_wire(filter_(scan("t"), predicate), CATALOG)
    assert answer["plan"]["op"] == "scan" and len(answer["plan"]["filters"]) == 1


def test_deeper_than_the_documented_limit_is_too_deep_with_its_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "MAX_DEPTH", 100)
    value: Any = c("a")
    for i in range(120):  # deeper than the limit in expression levels, within 3x the limit in JSON levels
        value = value + i
    with pytest.raises(PlanError) as info:
        optimize_wire(filter_(scan("t"), value > 5), CATALOG)
    assert info.value.code == "too_deep" and info.value.path.startswith("$.plan.predicate.args[0].args[0]")


def test_subqueries_nested_past_their_limit_are_too_deep() -> None:
    plan: dict[str, Any] = scan("t")
    for _ in range(read.MAX_SUBQUERY_DEPTH + 1):
        plan = filter_(scan("t"), {"subquery": plan, "kind": "exists"})
    with pytest.raises(PlanError) as info:
        optimize_wire(plan, CATALOG)
    assert info.value.code == "too_deep" and "subqueries" in info.value.message


def test_subqueries_nested_to_their_limit_are_answered() -> None:
    plan: dict[str, Any] = filter_(scan("t"), c("a") > 1)
    for _ in range(read.MAX_SUBQUERY_DEPTH - 1):
        plan = filter_(scan("t"), {"subquery": plan, "kind": "exists"})
    answer = optimize_wire(plan, CATALOG)
    assert answer["plan"]["op"] == "scan"


def test_nothing_in_the_service_raises_the_recursion_limit() -> None:
    """A completeness check: the engine and the service walk deep input without a raised limit."""
    offenders = []
    for folder in ("costmodel", "service", "api", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                if re.search(r"setrecursionlimit|RECURSION_LIMIT|allow_deep_plans", line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []
