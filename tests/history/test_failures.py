"""Recording never slows or fails an optimization: a store that raises, hangs or cannot be reached."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.history import HistoryRecorder, HistoryStore, Record, build_record
from service.optimize import OptimizeInput, OptimizeService
from service.settings import Settings
from tests.history.requests import request
from tests.serving import free_port

Serve = Callable[[FastAPI], AbstractContextManager[str]]


class BrokenStore(HistoryStore):
    """Every write fails, as a full disk or a dropped database connection would."""

    def __init__(self) -> None:
        self.calls = 0

    def add_many(self, records: Sequence[Record], counts: Mapping[str, int] | None = None) -> int:
        self.calls += 1
        raise OSError("disk I/O error")

    @property
    def backend(self) -> str:
        return "broken"


class StuckStore(HistoryStore):
    """Writes hang until released, as a locked table or a stalled network would."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def add_many(self, records: Sequence[Record], counts: Mapping[str, int] | None = None) -> int:
        self.release.wait(30)
        return 0

    @property
    def backend(self) -> str:
        return "stuck"


def test_a_failing_store_still_returns_the_optimization(
    serve: Serve, history_settings: Callable[..., Settings], caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(history_settings())
    store = BrokenStore()
    app.state.history = HistoryRecorder(store)
    with (
        caplog.at_level(logging.ERROR, logger="service.history"),
        serve(app) as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        for _ in range(3):
            response = http.post("/optimize", json={**request("join", "p"), "detail": "full"})
            assert response.status_code == 200
            assert response.json()["decisions"]
        assert app.state.history.flush()
        status = http.get("/api/history/status").json()
    assert status["failed"] == 3 and status["recorded"] == 0
    assert "disk I/O error" in status["last_error"]
    assert store.calls >= 1
    assert any("optimization history" in r.getMessage() and "failed" in r.getMessage() for r in caplog.records)


def test_an_unreachable_postgres_still_returns_the_optimization(
    serve: Serve, history_settings: Callable[..., Settings]
) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"  # nobody listens there
    app = create_app(history_settings(database_url=url))
    with serve(app) as base, httpx.Client(base_url=base, timeout=30) as http:
        started = time.perf_counter()
        response = http.post("/optimize", json=request("having", "p"))
        assert response.status_code == 200 and response.json()["sql"]
        assert time.perf_counter() - started < 5
        assert app.state.history.flush(20)
        assert http.get("/api/history/status").json()["failed"] == 1
        down = http.get("/api/optimizations")
        assert down.status_code == 503 and down.json()["error"] == "history_unavailable"
        assert "Traceback" not in down.text and "127.0.0.1" not in down.text


def test_a_hanging_store_neither_slows_optimize_nor_grows_without_bound(
    serve: Serve, history_settings: Callable[..., Settings]
) -> None:
    app = create_app(history_settings())
    store = StuckStore()
    body = request("join", "p")
    one = build_record(body, OptimizeService().optimize(OptimizeInput(**body))).size
    app.state.history = HistoryRecorder(store, queue_bytes=int(2.5 * one), batch_size=1, commit_timeout=0.2)
    try:
        with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
            for _ in range(8):
                started = time.perf_counter()
                answer = http.post("/optimize", json=body)
                assert answer.status_code == 200 and answer.headers["Pushdown-History"] == "not-recorded"
                assert time.perf_counter() - started < 2
            status = http.get("/api/history/status").json()
            # one record with the stuck writer, two in the queue (its byte limit), the other five dropped
            assert status["queued"] == 2 and status["queued_bytes"] <= status["queue_bytes_limit"] == int(2.5 * one)
            assert status["dropped"] == 5 and status["timed_out"] == 3
    finally:
        store.release.set()
    assert app.state.history.flush()
