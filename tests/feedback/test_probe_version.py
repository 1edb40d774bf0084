"""The request cache's probe reads a version per table (``feedback_versions``, kept by triggers) instead of
counting ``feedback_observations`` every second; feedback posted by another process still invalidates, and so do a
replacement and the history's retention (a cascade delete), on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.feedback.store import FeedbackStore
from service.settings import Settings
from tests.history.requests import CATALOG
from tests.postgres import PostgresServer

Serve = Callable[[FastAPI], AbstractContextManager[str]]
SQL = "SELECT c.name FROM cities c WHERE c.name LIKE 'A%'"
BODY = {"sql": SQL, "catalog": {"tables": {"cities": CATALOG["tables"]["cities"]}}, "context": {"task": "t"}}


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'pushdown.db'}"
    postgres: PostgresServer = request.getfixturevalue("postgres")
    return postgres.new_database()


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every statement the feedback store runs through its reads on the test's own thread, in order: a store of
    another test's app, still probing on a thread of its own while the suite runs, is not this test's."""
    seen: list[str] = []
    read = FeedbackStore._query
    owner = threading.get_ident()

    def recording(self: FeedbackStore, statement: str, params: Any = ()) -> list[tuple[Any, ...]]:
        if threading.get_ident() == owner:
            seen.append(statement)
        return read(self, statement, params)

    monkeypatch.setattr(FeedbackStore, "_query", recording)
    yield seen


def test_feedback_from_another_process_invalidates_through_the_version(
    serve: Serve,
    make_settings: Callable[..., Settings],
    tmp_path: Path,
    database_url: str,
    statements: list[str],
) -> None:
    def app(name: str) -> FastAPI:
        settings = make_settings(
            data_dir=tmp_path / name,
            database_url=database_url,
            history_durability="commit",
            cache_check_interval_s=3600,  # the test runs the probe itself
        )
        return create_app(settings)

    here, there = app("here"), app("there")  # two processes on one database
    with ExitStack() as stack:
        http = stack.enter_context(httpx.Client(base_url=stack.enter_context(serve(here)), timeout=30))
        other = stack.enter_context(httpx.Client(base_url=stack.enter_context(serve(there)), timeout=30))
        cache = here.state.optimizer.cache
        store: FeedbackStore = here.state.feedback.store
        first = http.post("/optimize", json={**BODY, "detail": "full"}).json()
        cache.check()  # the probe's first read: what later reads are compared with
        assert http.post("/optimize", json=BODY).headers["Pushdown-Cache"] == "hit"
        before = store.state()

        scan = next(n["id"] for n in first["cost"]["after"]["nodes"] if n["operator"] == "scan")
        posted = other.post(f"/feedback/{first['request_id']}", json={"nodes": [{"id": scan, "rows_out": 1}]})
        assert posted.status_code == 200, posted.text
        assert http.post("/optimize", json=BODY).headers["Pushdown-Cache"] == "hit"  # not seen until the probe
        statements.clear()
        cache.check()
        assert statements == ["SELECT table_name, version FROM feedback_versions"]  # no scan of the observations
        after = http.post("/optimize", json=BODY)
        assert after.headers["Pushdown-Cache"] == "miss"
        assert any(e["source"] == "feedback" for e in after.json()["estimates"])
        assert http.post("/optimize", json=BODY).headers["Pushdown-Cache"] == "hit"

        # Every change of a table's observations moves its version: a post, a replacement with the same
        # count, and the history's retention (the observations go by cascade).
        posted_once = store.state()
        assert posted_once["cities"] != before.get("cities")
        again = other.post(f"/feedback/{first['request_id']}", json={"nodes": [{"id": scan, "rows_out": 2}]})
        assert again.status_code == 200
        replaced = store.state()
        assert replaced["cities"] != posted_once["cities"]
        assert len(store.observations(["cities"])) == 1
        history = here.state.history.store
        assert history.enforce_retention(timedelta(0), None, now=datetime.now(UTC) + timedelta(days=1)) >= 1
        assert store.observations(["cities"]) == []
        assert store.state()["cities"] != replaced["cities"]
