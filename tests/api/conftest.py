"""Requests the HTTP tests share: a catalog and plans over it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

CATALOG: dict[str, Any] = {
    "tables": {
        "cities": {
            "columns": [
                {"name": "id", "type": "int"},
                {"name": "name", "type": "string"},
                {"name": "state_id", "type": "int"},
            ],
            "row_count": 20000,
            "column_stats": {"state_id": {"ndv": 50, "min": 1, "max": 50, "null_count": 0}},
        }
    }
}


def _greater(column: str, value: int) -> dict[str, Any]:
    return {"fn": ">", "args": [{"col": column}, {"lit": value, "type": "int"}]}


def _nested_filters(levels: int) -> dict[str, Any]:
    plan: dict[str, Any] = {"op": "scan", "table": "cities"}
    for i in range(levels):
        plan = {"op": "filter", "predicate": _greater("state_id", i % 50), "input": plan}
    return plan


@pytest.fixture
def catalog() -> dict[str, Any]:
    return json.loads(json.dumps(CATALOG))


@pytest.fixture
def small_request(catalog: dict[str, Any]) -> dict[str, Any]:
    """scan -> filter -> project, with a catalog and a context."""
    return {
        "plan": {
            "op": "project",
            "exprs": [{"expr": {"col": "name"}, "as": "name"}],
            "input": {
                "op": "filter",
                "predicate": _greater("state_id", 40),
                "input": {"op": "scan", "table": "cities"},
            },
        },
        "catalog": catalog,
        "options": {"mode": "cost"},
        "context": {"pipeline": "daily_cities", "task": "load", "run": "2026-11-22"},
    }


@pytest.fixture
def nested_filters() -> Callable[[int], dict[str, Any]]:
    """``nested_filters(n)``: n filter nodes stacked over one scan of ``cities``."""
    return _nested_filters
