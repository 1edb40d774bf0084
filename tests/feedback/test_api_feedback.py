"""POST /feedback/{request_id} over real HTTP, on SQLite and PostgreSQL: checked, stored, replaced, retained."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.settings import Settings
from tests.feedback.conftest import CATALOG

Serve = Callable[[FastAPI], AbstractContextManager[str]]
SQL = "SELECT s, count(*) AS n FROM fb_t WHERE b > 5 AND s LIKE 'x1%' GROUP BY s"


@pytest.fixture
def app(make_settings: Callable[..., Settings], store_url: str, tmp_path: Any) -> FastAPI:
    return create_app(make_settings(data_dir=tmp_path / "data", database_url=store_url))


def optimize(http: httpx.Client, run: str = "r1") -> dict[str, Any]:
    context = {"pipeline": "p", "task": "t", "run": run}
    response = http.post("/optimize", json={"sql": SQL, "catalog": CATALOG, "context": context, "detail": "full"})
    assert response.status_code == 200, response.text
    return response.json()


def scan_id(answer: dict[str, Any]) -> str:
    node = answer["plan"]
    while node["op"] != "scan":
        node = node["input"]
    return node["id"]


def test_feedback_is_checked_stored_and_replaced(serve: Serve, app: FastAPI) -> None:
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        answer = optimize(http)
        scan = scan_id(answer)
        request_id = answer["request_id"]

        missing = http.post("/feedback/no-such-request", json={"nodes": [{"id": scan, "rows_out": 1}]})
        assert missing.status_code == 404 and missing.json()["error"] == "not_found"

        bad_id = http.post(
            f"/feedback/{request_id}", json={"nodes": [{"id": scan, "rows_out": 1}, {"id": "zz", "rows_out": 2}]}
        )
        assert bad_id.status_code == 422
        assert bad_id.json()["path"] == "$.nodes[1].id" and scan in bad_id.json()["detail"]["nodes"]

        negative = http.post(f"/feedback/{request_id}", json={"nodes": [{"id": scan, "rows_out": -3}]})
        assert negative.status_code == 422 and negative.json()["path"] == "$.nodes[0].rows_out"
        twice = http.post(f"/feedback/{request_id}", json={"nodes": [{"id": scan, "rows_out": 1}] * 2})
        assert twice.status_code == 422 and twice.json()["path"] == "$.nodes[1].id"
        extra = http.post(f"/feedback/{request_id}", json={"nodes": [{"id": scan, "rows_out": 1, "rows": 2}]})
        assert extra.status_code == 422 and extra.json()["path"] == "$.nodes[0].rows"
        store = app.state.feedback.store
        assert store.get(request_id) is None  # nothing kept from a rejected body

        first = http.post(f"/feedback/{request_id}", json={"nodes": [{"id": scan, "rows_out": 140, "rows_in": 2000}]})
        assert first.status_code == 200, first.text
        (row,) = first.json()["nodes"]
        assert row["actual_rows"] == 140 and row["operator"] == "scan"
        assert row["q_error"] == pytest.approx(
            max(row["estimated_rows"], 140) / min(row["estimated_rows"], 140), rel=1e-3
        )
        assert first.json()["observations"] == 1

        second = http.post(f"/feedback/{request_id}", json={"nodes": [{"id": scan, "rows_out": 150}]})
        assert second.status_code == 200
        assert store.get(request_id)["nodes"] == [{"id": scan, "rows_out": 150}]
        (observation,) = [o for o in store.observations(["fb_t"]) if o.node_id == scan]
        assert observation.rows_out == 150 and observation.rows_in == 2000  # rows_in: the table's row count

        record = http.get(f"/api/optimizations/{request_id}").json()
        rows = {r["id"]: r for r in record["feedback"]["nodes"]}
        estimated = {n["id"]: n["rows_out"] for n in answer["cost"]["after"]["nodes"]}
        assert set(rows) == set(estimated)  # every node, reported or not
        assert rows[scan]["actual_rows"] == 150 and rows[scan]["estimated_rows"] == estimated[scan]
        assert rows[scan]["q_error"] == pytest.approx(max(estimated[scan], 150) / min(estimated[scan], 150), rel=1e-3)
        assert all(r["actual_rows"] is None for i, r in rows.items() if i != scan)

        def tree_nodes(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [n for node in nodes for n in [node, *tree_nodes(node["children"])]]

        in_tree = {n["id"]: n for n in tree_nodes(record["trees"]["after"])}
        assert in_tree[scan]["actual_rows"] == 150 and in_tree[scan]["q_error"] == rows[scan]["q_error"]
        runs = http.get("/api/feedback/runs", params={"pipeline": "p", "task": "t"}).json()
        assert [r["id"] for r in runs] == [request_id] and runs[0]["max_q_error"] == rows[scan]["q_error"]


def test_feedback_goes_with_its_record(serve: Serve, app: FastAPI) -> None:
    """The history's retention deletes records; their feedback and observations go with them."""
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        answer = optimize(http)
        posted = http.post(
            f"/feedback/{answer['request_id']}", json={"nodes": [{"id": scan_id(answer), "rows_out": 5}]}
        )
        assert posted.status_code == 200
    store = app.state.feedback.store
    assert store.get(answer["request_id"]) is not None
    history = app.state.history.store
    assert history.enforce_retention(timedelta(days=30), None, now=datetime.now(UTC) + timedelta(days=31)) == 1
    assert store.get(answer["request_id"]) is None
    assert store.observations(["fb_t"]) == []


def test_hostile_bodies_get_a_clear_4xx(serve: Serve, app: FastAPI) -> None:
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        answer = optimize(http)
        path = f"/feedback/{answer['request_id']}"
        scan = scan_id(answer)
        cases = [
            ({"nodes": [{"id": scan, "rows_out": 1}] * 10_001}, "$.nodes"),
            ({"nodes": [{"id": "x" * 1000, "rows_out": 1}]}, "$.nodes[0].id"),
            ({"nodes": [{"id": scan, "rows_out": 1.5}]}, "$.nodes[0].rows_out"),
            ({"nodes": [{"id": scan, "rows_out": True}]}, "$.nodes[0].rows_out"),
            ({"nodes": [{"id": scan, "rows_out": "7"}]}, "$.nodes[0].rows_out"),
            ({"nodes": [{"id": scan}]}, "$.nodes[0].rows_out"),
            ({"nodes": {"id": scan}}, "$.nodes"),
            ([], "$"),
        ]
        for body, where in cases:
            response = http.post(path, json=body)
            assert response.status_code == 422, (body, response.text)
            assert response.json()["path"] == where
        malformed = http.post(path, content=b"{nodes", headers={"Content-Type": "application/json"})
        assert malformed.status_code == 400
        assert http.post(f"/feedback/{'z' * 5000}", json={"nodes": []}).status_code == 404
        huge = http.post(path, json={"nodes": [{"id": scan, "rows_out": 10**40}]})
        assert huge.status_code == 200 and huge.json()["nodes"][0]["actual_rows"] == 10**40
        assert app.state.feedback.store.get(answer["request_id"])["nodes"] == [{"id": scan, "rows_out": 10**40}]
