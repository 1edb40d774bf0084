"""Shared test helpers: a real uvicorn server on a free port, talking real HTTP."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from api.app import create_app
from service.settings import Settings
from tests.postgres import postgres  # noqa: F401  (the session-wide PostgreSQL server fixture)


def _make_settings(**overrides: Any) -> Settings:
    """Settings that do not depend on the developer's PUSHDOWN_* environment."""
    values: dict[str, Any] = {
        "api_token": None,
        "max_body_bytes": 10 * 1024 * 1024,
        "max_json_depth": 2500,
        # history and statistics go to a directory of the test run, never the developer's ./data
        "data_dir": Path(tempfile.mkdtemp(prefix="pushdown-test-data-")),
    }
    return Settings(**{**values, **overrides})


@pytest.fixture(scope="session")
def make_settings() -> Callable[..., Settings]:
    """``make_settings(api_token="t")``: settings independent of the developer's PUSHDOWN_* environment."""
    return _make_settings


@pytest.fixture
def clean_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The current environment without PUSHDOWN_* variables, for subprocesses; the default data directory
    (under ``XDG_DATA_HOME``) is one of the test run's, never the developer's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHDOWN_")}
    return {**env, "XDG_DATA_HOME": str(tmp_path_factory.mktemp("xdg-data"))}


@contextmanager
def live_server(app: FastAPI) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a background thread on a free port; yields the base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("test server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def serve() -> Callable[[FastAPI], AbstractContextManager[str]]:
    """Start an extra server for one app, e.g. with other settings: ``with serve(app) as url: ...``."""
    return live_server


@pytest.fixture(scope="session")
def base_url() -> Iterator[str]:
    """The service on its default settings (no token)."""
    with live_server(create_app(_make_settings())) as url:
        yield url


@pytest.fixture(scope="session")
def client(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=30) as http:
        yield http
