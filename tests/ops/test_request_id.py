"""X-Request-ID: taken from the caller or made up, echoed in every answer, and in each JSON log line."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.logs import JsonFormatter
from service.settings import Settings
from tests.service.test_cli import REQUEST

Serve = Callable[[FastAPI], AbstractContextManager[str]]


class Captured(logging.Handler):
    """Log records formatted as the service formats them in production."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter())
        self.lines: list[dict[str, object]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(self.format(record)))

    def of(self, request_id: str, timeout: float = 5) -> list[dict[str, object]]:
        """The lines of one request; the access line is written once the answer has gone out, so wait for it."""
        deadline = time.monotonic() + timeout
        while not (found := [line for line in self.lines if line.get("request_id") == request_id]):
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        return found


@pytest.fixture(scope="module")
def app(make_settings: Callable[..., Settings]) -> FastAPI:
    return create_app(make_settings())


@pytest.fixture(scope="module")
def http(serve: Serve, app: FastAPI) -> Iterator[httpx.Client]:
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


@pytest.fixture
def logs() -> Iterator[Captured]:
    handler = Captured()
    access = logging.getLogger("pushdown.access")
    access.addHandler(handler)
    level = access.level
    access.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        access.removeHandler(handler)
        access.setLevel(level)


def test_a_made_up_id_is_the_answer_s_id_header_and_log_field(http: httpx.Client, logs: Captured) -> None:
    response = http.post("/optimize", json=REQUEST)
    assert response.status_code == 200
    request_id = response.headers["x-request-id"]
    assert response.json()["request_id"] == request_id and "client_request_id" not in response.json()
    (line,) = logs.of(request_id)
    assert line["logger"] == "pushdown.access" and line["level"] == "info"
    assert (line["method"], line["route"], line["status"]) == ("POST", "/optimize", 200)
    assert isinstance(line["duration_ms"], float) and line["ts"].endswith("+00:00")


def test_the_caller_s_id_is_echoed_and_logged(http: httpx.Client, logs: Captured) -> None:
    response = http.post("/optimize", json=REQUEST, headers={"X-Request-ID": "airflow-run-7.task:2"})
    assert response.headers["x-request-id"] == "airflow-run-7.task:2"
    body = response.json()
    assert body["client_request_id"] == "airflow-run-7.task:2"
    assert body["request_id"] != "airflow-run-7.task:2"  # the answer's own id stays unique: callers retry
    assert [line["status"] for line in logs.of("airflow-run-7.task:2")] == [200]


def test_a_reused_id_still_records_every_answer(http: httpx.Client, app: FastAPI) -> None:
    ids = {http.post("/optimize", json=REQUEST, headers={"X-Request-ID": "same"}).json()["request_id"] for _ in "ab"}
    assert len(ids) == 2
    assert app.state.history.flush(timeout=10)
    for answer_id in ids:
        assert http.get(f"/api/optimizations/{answer_id}").status_code == 200


@pytest.mark.parametrize("given", ["has spaces", "x" * 129, "new\\nline", ""])
def test_an_unsafe_id_is_replaced(http: httpx.Client, given: str) -> None:
    response = http.get("/healthz", headers={"X-Request-ID": given})
    assert response.headers["x-request-id"] != given and len(response.headers["x-request-id"]) == 36


def test_errors_carry_the_id_and_their_code_in_the_log(http: httpx.Client, logs: Captured) -> None:
    response = http.post("/optimize", content=b"{", headers={"content-type": "application/json", "X-Request-ID": "e1"})
    assert (response.status_code, response.headers["x-request-id"]) == (400, "e1")
    (line,) = logs.of("e1")
    assert (line["status"], line["error"]) == (400, "malformed_json")
