"""A subquery's own filters are decided too: TPC-H q11 and q02 put them on their scans, as Catalyst does.

q11's HAVING compares with an uncorrelated scalar subquery that joins partsupp,
supplier and nation under ``n_name = 'GERMANY'``; q02's correlated scalar
subquery filters ``r_name = 'EUROPE'``. After optimizing, each filter sits on
its own scan inside the subquery, the decisions list the subquery's operators,
and the rewritten query returns the same rows (tests/tpch runs all 22).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from costmodel import optimize_wire
from service.sql import sql_to_plan

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
CATALOG = json.loads((TPCH / "catalog.json").read_text())


def _subquery_plans(value: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "subquery" in item:
                found.append(item["subquery"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _scan_filters(plan: dict[str, Any], table: str) -> list[Any]:
    out: list[Any] = []
    stack = [plan]
    while stack:
        node = stack.pop()
        if node.get("op") == "scan" and node["table"] == table:
            out.extend(node.get("filters") or [])
        stack.extend(node[k] for k in ("input", "left", "right") if k in node)
        stack.extend(node.get("inputs", []))
    return out


def _node_ids(plan: dict[str, Any]) -> set[str]:
    ids: set[str] = set()
    stack = [plan]
    while stack:
        node = stack.pop()
        ids.add(node["id"])
        stack.extend(node[k] for k in ("input", "left", "right") if k in node)
        stack.extend(node.get("inputs", []))
    return ids


@pytest.mark.parametrize(("query", "table", "column"), [("q11", "nation", "n_name"), ("q02", "region", "r_name")])
@pytest.mark.parametrize("mode", ["always", "cost"])
def test_subquery_filter_reaches_its_scan(query: str, table: str, column: str, mode: str) -> None:
    plan = sql_to_plan((TPCH / "queries" / f"{query}.sql").read_text(), CATALOG)
    before = [s for s in _subquery_plans(plan) if not _scan_filters(s, table)]
    assert before, "the subquery starts with its filter above the joins"
    answer = optimize_wire(plan, CATALOG, {"mode": mode})
    (inner,) = _subquery_plans(answer["plan"])
    filters = _scan_filters(inner, table)
    assert any(f"{table}.{column}" in json.dumps(f) for f in filters), filters
    decided = {d["operator"] for d in answer["decisions"]}
    assert decided & _node_ids(inner), "the subquery's operators have decisions"
