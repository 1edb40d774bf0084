"""Substrait in, Substrait out over a real server: design.md's example query as DataFusion produces it."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

datafusion = pytest.importorskip("datafusion")
from datafusion import SessionContext  # noqa: E402
from datafusion.substrait import Consumer, Plan, Producer  # noqa: E402

from tests.api.dolt_data import CITY_NAMES, STATE_NAMES  # noqa: E402

CATALOG: dict[str, Any] = {
    "tables": {
        "cities": {
            "columns": [
                {"name": "id", "type": "bigint"},
                {"name": "name", "type": "string"},
                {"name": "state_id", "type": "bigint"},
            ],
            "row_count": 20000,
            "column_stats": {"state_id": {"ndv": 50, "min": 1, "max": 50, "null_count": 0}},
        },
        "states": {"columns": [{"name": "id", "type": "bigint"}, {"name": "name", "type": "string"}], "row_count": 50},
    }
}
QUERY = (
    "SELECT c.name, s.name FROM cities c JOIN states s ON c.state_id = s.id WHERE c.name LIKE 'A%' AND s.name LIKE 'A%'"
)


@pytest.fixture(scope="module")
def ctx() -> SessionContext:
    ctx = SessionContext()
    ctx.from_pydict({"id": [1, 2, 3, 4, 5], "name": STATE_NAMES}, name="states")
    names = CITY_NAMES
    ctx.from_pydict(
        {"id": list(range(1, 16)), "name": names, "state_id": [i // 3 + 1 for i in range(15)]}, name="cities"
    )
    return ctx


def _rows(table: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in table.to_pylist())


def test_substrait_round_trip_over_http(client: httpx.Client, ctx: SessionContext) -> None:
    substrait = json.loads(Producer.to_substrait_plan(ctx.sql(QUERY).logical_plan(), ctx).to_json())
    response = client.post("/optimize", json={"substrait": substrait, "catalog": CATALOG, "detail": "full"})
    assert response.status_code == 200, response.text
    out = response.json()
    assert any(d["action"] == "pushed" for d in out["decisions"])
    assert out["cost"]["after"]["total"] < out["cost"]["before"]["total"]
    assert "sql" not in out or out["sql"] is None
    logical = Consumer.from_substrait_plan(ctx, Plan.from_json(json.dumps(out["substrait"])))
    got = _rows(ctx.create_dataframe_from_logical_plan(logical).to_arrow_table())
    assert got == _rows(ctx.sql(QUERY).to_arrow_table())
    assert len(got) == 6


def test_unsupported_substrait_is_422_with_the_path(client: httpx.Client, ctx: SessionContext) -> None:
    sql = "SELECT name, row_number() OVER (ORDER BY name) AS r FROM states"
    substrait = json.loads(Producer.to_substrait_plan(ctx.sql(sql).logical_plan(), ctx).to_json())
    response = client.post("/optimize", json={"substrait": substrait})
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "unsupported"
    assert body["path"].startswith("$.substrait.relations[0].root.input")
    assert "window" in body["message"].lower()


def test_plan_and_substrait_together_are_refused(client: httpx.Client) -> None:
    response = client.post("/optimize", json={"substrait": {}, "plan": {"op": "scan", "table": "t"}})
    assert response.status_code == 422
    assert "substrait" in response.json()["message"]
