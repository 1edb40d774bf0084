"""The tables and jobs routes against a real server, and the end-to-end path: analyze, then optimize by ref."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.analyze import Analyzer
from service.settings import Settings
from tests.analyze.conftest import ROWS, Dataset

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Serve = Callable[[FastAPI], AbstractContextManager[str]]


def make_app(settings: Settings, spark: SparkSession | None = None) -> FastAPI:
    """The real app, with the test run's shared Spark session instead of a new one."""
    app = create_app(settings)
    if spark is not None:
        app.state.analyzer = Analyzer(app.state.analyzer.store, lambda: spark)
    return app


def wait_for(http: httpx.Client, job_id: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        job = http.get(f"/jobs/{job_id}").json()
        if job["state"] in ("succeeded", "failed"):
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.1)


@pytest.fixture(scope="module")
def http(
    spark: SparkSession, serve: Serve, make_settings: Callable[..., Settings], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    # The test tables live in the run's temporary folders: that is the data root here.
    root = str(tmp_path_factory.getbasetemp())
    settings = make_settings(data_dir=tmp_path_factory.mktemp("data"), analyze_histogram_buckets=10, data_roots=[root])
    with serve(make_app(settings, spark)) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def analyzed(http: httpx.Client, parquet_table: Dataset) -> dict[str, Any]:
    """``events`` analyzed through the API once; the finished job."""
    response = http.post(
        "/tables/events/analyze", json={"path": str(parquet_table.path), "options": {"sample_rows": 5000}}
    )
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["status_url"] == f"/jobs/{body['job_id']}"
    return wait_for(http, body["job_id"])


def test_an_analyze_job_runs_to_completion(analyzed: dict[str, Any]) -> None:
    assert analyzed["state"] == "succeeded", analyzed["error"]
    assert (analyzed["kind"], analyzed["target"], analyzed["percent"], analyzed["stage"]) == (
        "analyze",
        "events",
        100,
        "done",
    )
    assert analyzed["rows_seen"] == ROWS
    assert analyzed["result"]["version"] == 1 and analyzed["result"]["row_count"] == ROWS
    assert analyzed["error"] is None and analyzed["finished_at"] >= analyzed["started_at"]


def test_tables_list_and_detail(http: httpx.Client, analyzed: dict[str, Any]) -> None:
    tables = http.get("/tables").json()["tables"]
    assert [(t["name"], t["version"], t["row_count"]) for t in tables] == [("events", 1, ROWS)]
    assert tables[0]["analyzed_at"]
    detail = http.get("/tables/events").json()
    assert detail["versions"] == [1] and detail["version"] == 1
    stats = detail["statistics"]
    assert stats["row_count"] == ROWS and len(stats["column_stats"]["id"]["histogram"]) == 11
    assert stats["containers"] and stats["files"]
    assert set(stats["sample"]) == {"rows", "fraction", "seed", "target"}  # about the sample, not its rows
    assert http.get("/tables/events", params={"version": 1}).json()["version"] == 1


@pytest.mark.parametrize(
    ("url", "status", "error"),
    [
        ("/tables/nope", 404, "not_found"),
        ("/tables/events?version=9", 404, "not_found"),
        ("/tables/events?version=x", 422, "invalid_version"),
        ("/jobs/nope", 404, "not_found"),
    ],
)
def test_unknown_things_are_404(
    http: httpx.Client, analyzed: dict[str, Any], url: str, status: int, error: str
) -> None:
    response = http.get(url)
    assert (response.status_code, response.json()["error"]) == (status, error)


def test_unknown_table_lists_what_exists(http: httpx.Client, analyzed: dict[str, Any]) -> None:
    assert http.get("/tables/nope").json()["detail"] == {"tables": ["events"]}
    assert http.get("/tables/events?version=9").json()["detail"] == {"versions": [1]}


@pytest.mark.parametrize(
    ("name", "body", "error", "path"),
    [
        ("t", {"format": "parquet"}, "invalid_request", "$"),
        ("t", {"path": "/x", "table": "y"}, "invalid_request", "$"),
        ("t", {"path": "/x", "format": "xlsx"}, "invalid_request", "$.format"),
        ("t", {"path": "/x", "options": {"sample_rows": -1}}, "invalid_request", "$.options.sample_rows"),
        ("t", {"path": "/x", "colour": 1}, "invalid_request", "$.colour"),
        ("t", {"path": "{root}/no/such/file.parquet"}, "path_not_found", "$.path"),
        ("-x", {"path": "/x"}, "invalid_table_name", "$.name"),
        ("a b", {"path": "/x"}, "invalid_table_name", "$.name"),
    ],
)
def test_bad_analyze_requests_are_refused_before_a_job_starts(
    http: httpx.Client, tmp_path_factory: pytest.TempPathFactory, name: str, body: dict[str, Any], error: str, path: str
) -> None:
    if "path" in body:  # a path under the data root (the test run's temporary folders)
        body = {**body, "path": body["path"].format(root=tmp_path_factory.getbasetemp())}
    response = http.post(f"/tables/{name}/analyze", json=body)
    assert response.status_code == 422, response.text
    assert (response.json()["error"], response.json()["path"]) == (error, path)


def test_malformed_json_is_400(http: httpx.Client) -> None:
    response = http.post("/tables/t/analyze", content=b"{", headers={"content-type": "application/json"})
    assert (response.status_code, response.json()["error"]) == (400, "malformed_json")


def test_a_failing_job_reports_spark_s_error(http: httpx.Client, tmp_path: Path) -> None:
    not_parquet = tmp_path / "notes.parquet"
    not_parquet.write_text("not parquet at all")
    job_id = http.post("/tables/broken/analyze", json={"path": str(not_parquet)}).json()["job_id"]
    job = wait_for(http, job_id)
    assert job["state"] == "failed" and job["error"] and "Traceback" not in job["error"]
    assert "JVM stacktrace" not in job["error"]
    assert "broken" not in [t["name"] for t in http.get("/tables").json()["tables"]]


# ---------------------------------------------------------------- optimize against analyzed tables

SQL = "SELECT id FROM events WHERE skew = 1 AND category = 'alpha'"


def test_optimize_by_ref_estimates_from_the_sample(http: httpx.Client, analyzed: dict[str, Any]) -> None:
    response = http.post("/optimize", json={"sql": SQL, "catalog": {"tables": {"events": {"ref": "events"}}}})
    assert response.status_code == 200, response.text
    estimates = response.json()["estimates"]
    assert estimates, response.json()
    for estimate in estimates:
        assert estimate["source"] == "sample", estimate
        assert 4000 < estimate["sample_size"] < 6000
        low, high = estimate["interval"]
        assert low <= estimate["selectivity"] <= high
    by_predicate = {e["predicate"]: e["selectivity"] for e in estimates}
    skew = next(v for k, v in by_predicate.items() if "skew" in k)
    assert skew == pytest.approx(0.5, abs=0.04)  # half the rows hold the skewed value


def test_optimize_a_plan_against_a_pinned_version(http: httpx.Client, analyzed: dict[str, Any]) -> None:
    plan = {
        "op": "filter",
        "predicate": {"fn": "is_null", "args": [{"col": "mostly_null"}]},
        "input": {"op": "scan", "table": "e"},
    }
    response = http.post(
        "/optimize", json={"plan": plan, "catalog": {"tables": {"e": {"ref": "events", "version": 1}}}}
    )
    assert response.status_code == 200, response.text
    (estimate,) = response.json()["estimates"]
    assert estimate["source"] == "sample" and estimate["selectivity"] == pytest.approx(0.9, abs=0.03)


def test_optimize_with_an_unknown_ref_names_the_tables(http: httpx.Client, analyzed: dict[str, Any]) -> None:
    response = http.post("/optimize", json={"sql": SQL, "catalog": {"tables": {"events": {"ref": "evnts"}}}})
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "unknown_table" and body["path"] == "$.catalog.tables.events.ref"
    assert body["detail"] == {"ref": "evnts", "tables": ["events"]}


# ---------------------------------------------------------------- auth and configuration (no Spark needed)


def test_the_routes_need_the_token(serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path) -> None:
    with serve(make_app(make_settings(api_token="s3cret", data_dir=tmp_path))) as url:
        for method, path in (
            ("GET", "/tables"),
            ("GET", "/tables/t"),
            ("GET", "/jobs/j"),
            ("POST", "/tables/t/analyze"),
        ):
            assert httpx.request(method, url + path, json={}).status_code == 401, path
        ok = httpx.get(url + "/tables", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and ok.json() == {"tables": []}
    assert not (tmp_path / "pushdown.db").exists()  # reading an empty store creates nothing


@pytest.mark.parametrize("database_url", ["mysql://u@db/p", "postgresql://u@unreachable.invalid/p"])
def test_an_unsupported_or_unreachable_store_answers_503(
    serve: Serve, make_settings: Callable[..., Settings], database_url: str
) -> None:
    with serve(make_app(make_settings(database_url=database_url))) as url:
        response = httpx.get(url + "/tables")
        assert (response.status_code, response.json()["error"]) == (503, "statistics_unavailable")
        ref = {"sql": SQL, "catalog": {"tables": {"events": {"ref": "events"}}}}
        assert httpx.post(url + "/optimize", json=ref).status_code == 503
