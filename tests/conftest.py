"""Shared test helpers: a real uvicorn server on a free port, talking real HTTP; and the two test tiers.

Plain ``python -m pytest`` runs the fast tier: the engine's, the SQL adapter's, the service's and the API's tests,
lint and format. ``python -m pytest --full`` (or ``PUSHDOWN_FULL_TESTS=1``; the README's test command, which CI
runs) adds the integration tier: whatever starts Spark (a JVM), PostgreSQL, a browser, Airflow's environment, a
fresh virtualenv or a service process of its own, the type check, the campaigns and every test marked ``slow``.
A test is in the integration tier when it is marked ``integration`` or ``slow``, lives in one of
``INTEGRATION_PATHS``, or uses one of ``INTEGRATION_FIXTURES`` (``integration_reason`` says which).
"""

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

#: the environment variable that turns on the full suite, as ``--full`` does
FULL_ENV = "PUSHDOWN_FULL_TESTS"

#: directories, files and tests (node ids, relative to the checkout) in the integration tier, and why
INTEGRATION_PATHS: dict[str, str] = {
    "tests/airflow": "Airflow's own virtualenv",
    "tests/analyze": "local Spark jobs",
    "tests/bench": "the benchmarks, on Spark, DuckDB and TPC-H data",
    "tests/deploy": "Docker Compose, hadolint, the image's environment and fresh installs",
    "tests/tpch": "TPC-H data generated and run on DuckDB and Spark",
    "tests/correctness": "the differential campaigns (DuckDB, Spark)",
    "tests/security/test_schemathesis.py": "generated requests over the whole schema",
    "tests/security/test_worker_pool.py": "service processes with workers",
    "tests/security/test_load.py": "load on a service process",
    "tests/security/test_bounded_work.py": "service processes and Spark",
    "tests/security/test_data_roots.py": "service processes and Spark",
    "tests/security/test_hostile_inputs.py": "a service process",
    "tests/substrait/test_tpch_on_duckdb_and_spark.py": "TPC-H on DuckDB and Spark",
    "tests/history/test_kill.py": "service processes killed",
    "tests/history/test_restart.py": "service processes restarted",
    "tests/history/test_shutdown.py": "service processes shut down",
    "tests/history/test_dashboard_browser.py": "Chromium",
    "tests/feedback/test_dashboard_feedback_browser.py": "Chromium",
    "tests/feedback/test_dashboard_dataframe_browser.py": "Chromium and local Spark",
    "tests/feedback/test_client_package.py": "the client package built",
    "tests/ops/test_docs_offline.py": "Chromium",
    "tests/ops/test_quickstart.py": "the README's quickstart on Spark",
    "tests/ops/test_serve.py": "pushdown serve as a process",
    "tests/ops/test_shared_jobs.py": "service processes with workers",
    "tests/ops/test_abandoned_jobs.py": "service processes and Spark jobs",
    "tests/test_type_check.py": "mypy over the project",
    "tests/service/test_client.py::test_analyze_tables_and_history_over_http": "a local Spark analyze job",
    "tests/service/test_cli.py::test_serve_answers_healthz_and_honours_the_environment": "pushdown serve as a process",
    "tests/security/test_http_hygiene.py::test_the_operator_can_say_so_explicitly": "pushdown serve as a process",
    "tests/security/test_http_hygiene.py::test_the_token_never_reaches_the_access_log": "pushdown serve as a process",
    "tests/security/test_http_hygiene.py::test_loopback_without_a_token_starts": "pushdown serve as a process",
}

#: fixtures whose users (directly or through other fixtures) are in the integration tier, and why
INTEGRATION_FIXTURES: dict[str, str] = {
    "spark": "local Spark",
    "postgres": "a PostgreSQL server",
    "airflow_python": "Airflow's own virtualenv",
    "tpch_data": "TPC-H data generated",
    "browser": "Chromium",
    "page_factory": "Chromium",
}

_ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        default=False,
        help=f"run the integration tier too (Spark, PostgreSQL, browsers, Airflow, installs); or {FULL_ENV}=1",
    )


def full_suite(config: pytest.Config) -> bool:
    """Whether this run is the full suite (``--full`` or ``PUSHDOWN_FULL_TESTS=1``)."""
    return bool(config.getoption("--full")) or os.environ.get(FULL_ENV, "") not in ("", "0")


def integration_reason(item: pytest.Item) -> str | None:
    """Why ``item`` is in the integration tier, or None when it is in the fast tier."""
    for name in ("integration", "slow"):
        if item.get_closest_marker(name) is not None:
            return f"marked {name}"
    try:
        where = Path(str(item.path)).resolve().relative_to(_ROOT).as_posix()
    except ValueError:
        where = ""
    node = where + item.nodeid[item.nodeid.find("::") :] if "::" in item.nodeid else where
    for path, why in INTEGRATION_PATHS.items():
        if node == path or any(node.startswith(path + tail) for tail in ("/", "::", "[")):
            return why
    fixtures = set(getattr(item, "fixturenames", ()))
    for fixture, why in INTEGRATION_FIXTURES.items():
        if fixture in fixtures:
            return why
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(isinstance(v, str) and v == "postgres" for v in params.values()):  # a store_url-style parameter
        return INTEGRATION_FIXTURES["postgres"]
    return None


def pytest_report_header(config: pytest.Config) -> str:
    if full_suite(config):
        return "tiers: the full suite (fast and integration tiers)"
    return (
        f"tiers: the fast tier only; the full suite (Spark, PostgreSQL, browsers, ...): pytest --full or {FULL_ENV}=1"
    )


def _names_tests(config: pytest.Config) -> bool:
    """Whether the command line names tests (``pytest tests/spark``, ``pytest tests/x.py::test_y``): those run
    whatever their tier, as a developer who names them expects."""
    return bool(config.getoption("file_or_dir"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Outside the full suite, the integration tier is deselected (the summary counts it), unless the command line
    names the tests to run."""
    if full_suite(config) or _names_tests(config):
        return
    kept: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    for item in items:
        (deselected if integration_reason(item) else kept).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


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
