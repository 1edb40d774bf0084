"""Answers computed brief (issue 19.1: "explain trees and full cost matrices only when asked or rendered lazily").

A caller sent a summary, with no cache or history to keep the full answer, does not pay for the EXPLAIN trees
or the per-node cost tables; the full answer, when read after all, is the one computed in full, to the
byte, keys in the same order.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import costmodel
from costmodel.optimizer import optimize_wire_brief
from service.optimize import OptimizeInput, OptimizeService
from service.request_cache import RequestCache

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
CATALOG: dict[str, Any] = json.loads((TPCH / "catalog.json").read_text())
QUERIES = ["q02", "q05", "q15", "q21"]  # joins, a correlated subquery, a view used twice, EXISTS and NOT EXISTS


def tpch_plan(name: str) -> dict[str, Any]:
    return json.loads((TPCH / "plans" / f"{name}.json").read_text())


@pytest.mark.parametrize("name", QUERIES)
def test_the_engine_brief_answer_completed_is_the_full_answer_to_the_byte(name: str) -> None:
    brief, parts = optimize_wire_brief(tpch_plan(name), CATALOG, baseline=True)
    assert "explain" not in brief
    assert "nodes" not in brief["cost"]["before"] and "nodes" not in brief["cost"]["after"]
    full = costmodel.optimize_wire(tpch_plan(name), CATALOG, baseline=True)
    completed = parts.completed(brief)
    assert json.dumps(completed) == json.dumps(full)  # same values, keys in the same order
    assert "explain" not in brief and "nodes" not in brief["cost"]["after"]  # completing made new objects
    assert parts.completed(brief) == completed  # rendered once, the same parts again


@pytest.mark.parametrize("body", [{"plan": "q05"}, {"sql": "q15"}], ids=["plan", "sql"])
def test_a_summary_answer_is_sent_brief_and_its_full_answer_is_made_when_read(body: dict[str, Any]) -> None:
    def request(detail: str = "summary") -> OptimizeInput:
        kind, name = next(iter(body.items()))
        given = tpch_plan(name) if kind == "plan" else (TPCH / "queries" / f"{name}.sql").read_text()
        return OptimizeInput(**{kind: given}, catalog=copy.deepcopy(CATALOG), detail=detail)  # type: ignore[arg-type]

    service = OptimizeService()
    brief = service.answer(request(), "id-1")
    full = service.answer(request(), "id-1", full=True)
    assert not brief.full_made and full.full_made
    assert "explain" not in brief.brief  # not made: nobody read it yet
    assert brief.payload == full.payload  # the caller gets the same bytes
    sent = json.loads(brief.payload)
    assert "explain" not in sent and "decisions" not in sent and sent["summary"]
    assert brief.record == full.record  # read after all: the full answer's JSON, to the byte
    assert brief.full_made and brief.answer == full.answer and brief.answer["explain"]["after"]
    assert json.loads(brief.record) == brief.answer

    at_full = service.answer(request("full"), "id-1")  # a caller that asks for the full answer gets it at once
    assert at_full.full_made and at_full.payload == at_full.record and json.loads(at_full.payload)["explain"]["after"]


def test_an_answer_the_cache_keeps_is_made_full() -> None:
    """A cached entry serves later callers at any detail, and the history of a hit: it is kept in full."""
    service = OptimizeService(cache=RequestCache())
    request = OptimizeInput(plan=tpch_plan("q05"), catalog=copy.deepcopy(CATALOG))
    miss = service.answer(request, "id-1")
    assert miss.cache == "miss" and miss.full_made
    hit = service.answer(request, "id-2")
    assert hit.cache == "hit" and hit.answer["explain"]["after"] and hit.answer["cost"]["after"]["nodes"]
