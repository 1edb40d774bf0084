"""All 22 TPC-H queries: DataFusion's producer -> wire plan -> cost model -> Substrait -> DataFusion's consumer.

Each rewritten plan must return exactly the original query's rows, first on
empty tables (it binds and runs), then on scale factor 0.01. The optimizer
runs in ``always`` mode too, which pushes every legal filter, so the writer
is exercised on the most rewritten plans the engine produces.
"""

from __future__ import annotations

from typing import Any

import pytest

from costmodel import optimize_wire
from service.substrait import plan_to_substrait, substrait_to_plan
from tests.substrait.conftest import CATALOG, NAMES, QUERIES, Tpch


def _round_trip(tpch: Tpch, sql: str, mode: str) -> tuple[dict[str, Any], dict[str, Any]]:
    original = tpch.substrait(sql)
    plan = substrait_to_plan(original, CATALOG)
    response = optimize_wire(plan, CATALOG, {"mode": mode})
    return response, plan_to_substrait(response["plan"], original)


def test_there_are_22_queries() -> None:
    assert [f"q{i:02d}" for i in range(1, 23)] == NAMES


@pytest.mark.parametrize("path", QUERIES, ids=NAMES)
def test_round_trip_on_empty_tables(tpch_empty: Tpch, path: Any) -> None:
    sql = path.read_text()
    _, rewritten = _round_trip(tpch_empty, sql, "cost")
    assert tpch_empty.run_substrait(rewritten) == tpch_empty.run_sql(sql)


@pytest.mark.parametrize("mode", ["cost", "always"])
@pytest.mark.parametrize("path", QUERIES, ids=NAMES)
def test_round_trip_rows_match(tpch: Tpch, path: Any, mode: str) -> None:
    sql = path.read_text()
    expected = tpch.run_sql(sql)
    response, rewritten = _round_trip(tpch, sql, mode)
    assert tpch.run_substrait(rewritten) == expected
    if mode == "always":  # the test proves something only if filters really moved
        assert any(d["action"] == "pushed" for d in response["decisions"])


def test_most_queries_return_rows(tpch: Tpch) -> None:
    """Guards the data: a round trip of empty results would prove little."""
    empty = [p.stem for p in QUERIES if not tpch.run_sql(p.read_text())]
    assert len(empty) <= 2, empty
