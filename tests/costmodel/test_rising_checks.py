"""Pulling up costs nothing where it cannot change the answer: a plan whose predicates are all cheaper than
``expensive_threshold`` is placed without the rising walks, and its answer is the one the walks would give."""

from __future__ import annotations

from typing import Any

import pytest

from costmodel.passes import legality
from tests.costmodel.dsl import after, and_, c, filter_, join, project, run, scan, table, udf

T = {
    "big": table(["k", "x"], rows=100_000, k={"ndv": 100}),
    "small": table(["k", "y"], rows=100, k={"ndv": 100}),
}


def _plan(predicate: Any) -> dict[str, Any]:
    joined = join(filter_(scan("big"), predicate, id="f"), scan("small"), c("big.k") == c("small.k"), id="j")
    return project(joined, id="p", k=c("big.k"))


def _answer(result: Any) -> tuple[str, list[Any], float]:
    return after(result), result.decisions, result.total_after


def test_cheap_predicates_skip_the_rising_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_walk(expr: Any) -> bool:
        raise AssertionError("can_raise walked a plan whose predicates cannot rise")

    monkeypatch.setattr(legality, "can_raise", no_walk)
    result = run(_plan(and_(c("big.x") > 5, c("big.x") < 90)), T)
    assert not any(d.get("action") == "pulled_up" for d in result.decisions)


def test_an_expensive_predicate_still_takes_the_rising_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[Any] = []
    real = legality.can_raise

    def counted(expr: Any) -> bool:
        walked.append(expr)
        return real(expr)

    monkeypatch.setattr(legality, "can_raise", counted)
    run(_plan(udf("score", c("big.x"), cost=5000) > 1), T)
    assert walked


@pytest.mark.parametrize("threshold", [10.0, 1.5])
def test_the_shortcut_answers_as_the_walks_do(monkeypatch: pytest.MonkeyPatch, threshold: float) -> None:
    """Forced to take the walks, a plan without an expensive predicate gets the same plan, decisions and cost."""
    plan = _plan(and_(c("big.x") > 5, c("big.x") < 90))
    shortcut = _answer(run(plan, T, expensive_threshold=threshold))
    monkeypatch.setattr(legality, "has_expensive_predicate", lambda work: True)
    assert _answer(run(plan, T, expensive_threshold=threshold)) == shortcut
