"""The history over real HTTP: /optimize records, /api/optimizations and /api/savings read, the token guards."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.answer import for_caller
from service.history import HistoryRecorder
from service.settings import Settings
from tests.history.requests import MIX, request

Serve = Callable[[FastAPI], AbstractContextManager[str]]


def post_mix(http: httpx.Client, rounds: int = 1) -> list[dict[str, Any]]:
    answers = []
    for n in range(rounds):
        for kind, pipeline, task in MIX:
            response = http.post("/optimize", json=request(kind, pipeline, task, f"run-{n}"))
            assert response.status_code == 200, response.text
            answers.append(response.json())
    return answers


def recorder(app: FastAPI) -> HistoryRecorder:
    return app.state.history


def test_every_optimization_is_recorded_and_readable(serve: Serve, history_settings: Callable[..., Settings]) -> None:
    app = create_app(history_settings())
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        answers = post_mix(http)
        assert recorder(app).flush()
        page = http.get("/api/optimizations", params={"limit": 100}).json()
        assert page["total"] == len(answers) and page["offset"] == 0
        assert {item["id"] for item in page["items"]} == {a["request_id"] for a in answers}

        sql_answer = answers[1]
        record = http.get(f"/api/optimizations/{sql_answer['request_id']}").json()
        # the full answer: what was sent (the summary by default) is it trimmed; the drill-down's parts are in it
        assert for_caller(record["response"], "summary") == sql_answer
        assert record["response"]["decisions"] and record["response"]["explain"]["before"]
        assert record["response"]["cost"]["after"]["nodes"]
        assert record["request"]["sql"] == request("having", None)["sql"]
        assert record["request"]["context"] == {"pipeline": "daily_cities", "task": "report", "run": "run-0"}
        assert record["input_form"] == "sql" and record["model_version"] == sql_answer["model_version"]
        assert record["duration_ms"] > 0
        before, after = record["trees"]["before"], record["trees"]["after"]
        assert before[0]["label"].startswith("Limit") and before[0]["cost"] is not None
        assert after[0]["id"] == record["response"]["cost"]["after"]["nodes"][0]["id"]

        missing = http.get("/api/optimizations/nope")
        assert missing.status_code == 404 and missing.json()["error"] == "not_found"

        savings = http.get("/api/savings").json()
        totals = savings["totals"]
        assert totals["requests"] == len(answers)
        assert totals["cost_before"] == pytest.approx(sum(a["cost"]["before"]["total"] for a in answers))
        assert totals["cost_after"] == pytest.approx(sum(a["cost"]["after"]["total"] for a in answers))
        assert {p["pipeline"] for p in savings["by_pipeline"]} == {"daily_cities", "web_sessions", "fraud_scores"}

        web = http.get("/api/savings", params={"pipeline": "web_sessions"}).json()
        assert web["totals"]["requests"] == 2
        listed = http.get("/api/optimizations", params={"pipeline": "web_sessions", "task": "sample"}).json()
        assert listed["total"] == 1 and listed["items"][0]["blocked"] == 1
        future = http.get("/api/optimizations", params={"from": "2999-01-01"}).json()
        assert future["total"] == 0

        bad = http.get("/api/optimizations", params={"from": "yesterday"})
        assert bad.status_code == 422 and "Traceback" not in bad.text

        status = http.get("/api/history/status").json()
        assert status["enabled"] and status["backend"] == "sqlite"
        assert status["recorded"] == len(answers) and status["failed"] == status["dropped"] == 0


def test_the_token_guards_the_history_api_but_the_dashboard_shell_only_asks_for_it(
    serve: Serve, history_settings: Callable[..., Settings]
) -> None:
    app = create_app(history_settings(api_token="s3cret"))
    auth = {"Authorization": "Bearer s3cret"}
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        assert http.post("/optimize", json=request("join", "p"), headers=auth).status_code == 200
        assert recorder(app).flush()
        for path in ("/api/optimizations", "/api/savings", "/api/history/status"):
            refused = http.get(path)
            assert refused.status_code == 401 and refused.json()["error"] == "unauthorized"
            assert http.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert http.get(path, headers=auth).status_code == 200
        page = http.get("/dashboard")  # the shell holds no data: it shows the login form and asks the API
        assert page.status_code == 200 and 'id="login-form"' in page.text
        assert http.get("/dashboard/assets/app.js").status_code == 200


def test_dashboard_and_assets_are_served_locally(client: httpx.Client) -> None:
    page = client.get("/dashboard")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "//cdn" not in page.text and "https://" not in page.text  # nothing from the internet
    for asset in ("app.js", "style.css", "vendor/chart.umd.js", "vendor/chart.js.LICENSE.md"):
        response = client.get(f"/dashboard/assets/{asset}")
        assert response.status_code == 200, asset
    assert "Chart.js v4" in client.get("/dashboard/assets/vendor/chart.umd.js").text[:200]
    assert client.get("/dashboard/assets/../../app.py").status_code == 404


def test_recording_off_leaves_optimize_alone_and_the_api_says_so(
    serve: Serve, history_settings: Callable[..., Settings]
) -> None:
    app = create_app(history_settings(history_enabled=False))
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        assert http.post("/optimize", json=request("join", "p")).status_code == 200
        off = http.get("/api/savings")
        assert off.status_code == 503 and off.json()["error"] == "history_unavailable"
        assert http.get("/api/history/status").json()["enabled"] is False
