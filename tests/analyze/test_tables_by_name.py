"""A new user's path: analyze a Parquet table with Spark, then optimize SQL over it with no catalog at all.

The service finds the analyzed table by the name the query uses, mixes it with whatever the request's catalog
describes, says which statistics it used, and warns once the table's files change.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from fastapi import FastAPI

from service.errors import InputError
from service.settings import Settings
from service.statistics import StatisticsStore
from tests.analyze.conftest import ROWS, Dataset
from tests.analyze.test_http import make_app, wait_for
from tests.service.test_cli import pushdown_command

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Serve = Callable[[FastAPI], AbstractContextManager[str]]
SQL = "SELECT id FROM events WHERE skew = 1 AND category = 'alpha'"


@pytest.fixture(scope="module")
def source(parquet_table: Dataset, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the Parquet table this module may change."""
    return Path(shutil.copytree(parquet_table.path, tmp_path_factory.mktemp("by-name") / "events"))


@pytest.fixture(scope="module")
def http(
    spark: SparkSession,
    serve: Serve,
    make_settings: Callable[..., Settings],
    tmp_path_factory: pytest.TempPathFactory,
    source: Path,
) -> Iterator[httpx.Client]:
    """A service that has analyzed ``events`` (a real Spark job, through the API) and nothing else."""
    settings = make_settings(
        data_dir=tmp_path_factory.mktemp("data"), analyze_histogram_buckets=10, data_roots=[str(source.parent)]
    )
    with serve(make_app(settings, spark)) as url, httpx.Client(base_url=url, timeout=60) as client:
        started = client.post("/tables/events/analyze", json={"path": str(source), "options": {"sample_rows": 5000}})
        assert started.status_code == 202, started.text
        job = wait_for(client, started.json()["job_id"])
        assert job["state"] == "succeeded", job["error"]
        yield client


def test_sql_over_an_analyzed_table_needs_no_catalog(http: httpx.Client) -> None:
    response = http.post("/optimize", json={"sql": SQL})
    assert response.status_code == 200, response.text
    body = response.json()
    (used,) = body["statistics"]
    assert (used["table"], used["analyzed_table"], used["resolved_by"], used["version"]) == (
        "events",
        "events",
        "name",
        1,
    )
    assert used["row_count"] == ROWS and 4000 < used["sample_rows"] < 6000 and used["analyzed_at"]
    assert used["fingerprint"]["files"] == 2 and len(used["fingerprint"]["digest"]) == 64
    assert used["source_changed"] is False and not body["warnings"]
    # the stored sample, not defaults, made the estimates
    assert body["estimates"] and {e["source"] for e in body["estimates"]} == {"sample"}
    assert "events" in body["sql"].lower() and "skew" in body["sql"].lower()


def test_names_match_case_insensitively_and_mix_with_the_request_catalog(http: httpx.Client) -> None:
    sql = "SELECT e.id, r.name FROM EVENTS e JOIN regions r ON e.skew = r.id WHERE r.name = 'north'"
    regions = {"columns": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}], "row_count": 500}
    response = http.post("/optimize", json={"sql": sql, "catalog": {"tables": {"regions": regions}}, "detail": "full"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert [(u["table"], u["analyzed_table"]) for u in body["statistics"]] == [("EVENTS", "events")]
    # the catalog's regions was used as given: its row count reaches the cost table
    scans = [n for n in body["cost"]["before"]["nodes"] if n["operator"] == "scan"]
    assert sorted(n["rows_out"] for n in scans) == [500, ROWS]


def test_a_catalog_entry_wins_over_the_analyzed_table_of_the_same_name(http: httpx.Client) -> None:
    given = {"columns": [{"name": "id", "type": "int"}, {"name": "skew", "type": "int"}], "row_count": 7}
    response = http.post(
        "/optimize",
        json={
            "sql": "SELECT id FROM events WHERE skew = 1",
            "catalog": {"tables": {"events": given}},
            "detail": "full",
        },
    )
    assert response.status_code == 200, response.text
    assert response.json()["statistics"] == []
    (scan,) = [n for n in response.json()["cost"]["before"]["nodes"] if n["operator"] == "scan"]
    assert scan["rows_out"] == 7


def test_a_plan_request_resolves_its_scans_by_name(http: httpx.Client) -> None:
    plan = {
        "op": "filter",
        "predicate": {"fn": "is_null", "args": [{"col": "mostly_null"}]},
        "input": {"op": "scan", "table": "events"},
    }
    response = http.post("/optimize", json={"plan": plan})
    assert response.status_code == 200, response.text
    assert [u["resolved_by"] for u in response.json()["statistics"]] == ["name"]
    (estimate,) = response.json()["estimates"]
    assert estimate["source"] == "sample" and estimate["selectivity"] == pytest.approx(0.9, abs=0.03)


def test_a_ref_is_reported_as_such(http: httpx.Client) -> None:
    response = http.post(
        "/optimize", json={"sql": SQL.replace("events", "e"), "catalog": {"tables": {"e": {"ref": "events"}}}}
    )
    assert response.status_code == 200, response.text
    assert [(u["table"], u["resolved_by"]) for u in response.json()["statistics"]] == [("e", "ref")]


def test_an_unknown_table_is_still_refused_by_name(http: httpx.Client) -> None:
    response = http.post("/optimize", json={"sql": "SELECT e.id FROM events e JOIN nowhere n ON e.id = n.id"})
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "unknown_table" and "nowhere" in response.json()["message"]


def test_a_changed_source_is_warned_about(http: httpx.Client, source: Path) -> None:
    """Runs last in this module: it rewrites one of the table's files."""
    part = source / "part-1.parquet"
    stat = part.stat()
    os.utime(part, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    body = http.post("/optimize", json={"sql": SQL}).json()
    (used,) = body["statistics"]
    assert used["source_changed"] is True
    (warning,) = body["warnings"]
    assert "events" in warning and "changed since it was analyzed" in warning and "re-analyze" in warning


# ---------------------------------------------------------------- the command line, from any directory


@pytest.mark.slow
def test_the_cli_finds_what_the_service_analyzed_from_any_directory(
    parquet_table: Dataset, spark: SparkSession, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    """``pushdown analyze`` then ``pushdown optimize --sql`` with no catalog, each run in a different directory:
    both use the service's default data directory, not the current one."""
    env = {**clean_env, "PUSHDOWN_SPARK_MASTER": "local[1]"}
    elsewhere = [tmp_path / "a", tmp_path / "b"]
    for folder in elsewhere:
        folder.mkdir()
    analyzed = subprocess.run(
        [*pushdown_command(), "analyze", str(parquet_table.path), "--name", "events", "--sample-rows", "500", "--json"],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=elsewhere[0],
        env=env,
    )
    assert analyzed.returncode == 0, analyzed.stderr[-3000:]
    optimized = subprocess.run(
        [*pushdown_command(), "optimize", "--sql", SQL, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=elsewhere[1],
        env=env,
    )
    assert optimized.returncode == 0, optimized.stderr[-3000:]
    body = json.loads(optimized.stdout)
    assert [(u["analyzed_table"], u["row_count"]) for u in body["statistics"]] == [("events", ROWS)]
    assert not any(folder.joinpath("data").exists() for folder in elsewhere)
    data_dir = Path(env["XDG_DATA_HOME"]) / "pushdown"
    assert StatisticsStore(data_dir / "pushdown.db", data_dir / "samples").names() == ["events"]


# ---------------------------------------------------------------- namespaces (stored statistics, no Spark)


def _store_with(tmp_path: Path, *names: str) -> StatisticsStore:
    store = StatisticsStore(tmp_path / "pushdown.db", tmp_path / "samples")
    for name in names:
        stats = {"columns": [{"name": "id", "type": "int"}], "row_count": 10 * len(name), "source": {"table": name}}
        store.commit(name, stats, store.stage_sample(name, None))
    return store


def test_a_namespace_is_optional_unless_it_is_ambiguous(tmp_path: Path) -> None:
    from service.optimize import OptimizeInput, OptimizeService

    service = OptimizeService(_store_with(tmp_path, "sales.orders", "audit.orders", "items"))

    def used(sql: str) -> list[tuple[str, str, int]]:
        answer = service.optimize(OptimizeInput(sql=sql))
        return [(u["table"], u["analyzed_table"], u["row_count"]) for u in answer["statistics"]]

    # the SQL adapter keys its catalog by the bare name
    assert used("SELECT id FROM sales.orders WHERE id > 1") == [("orders", "sales.orders", 120)]
    assert used("SELECT id FROM Items WHERE id > 1") == [("Items", "items", 50)]
    with pytest.raises(InputError) as refused:
        used("SELECT id FROM orders WHERE id > 1")
    assert refused.value.code == "ambiguous_table"
    assert refused.value.detail == {"table": "orders", "candidates": ["audit.orders", "sales.orders"]}
    with pytest.raises(InputError) as refused:
        used("SELECT a.id FROM audit.orders a JOIN sales.orders s ON a.id = s.id")
    assert refused.value.code == "ambiguous_table" and "same name in two namespaces" in refused.value.message


def test_a_table_analyzed_without_files_has_no_fingerprint_to_check(tmp_path: Path) -> None:
    from service.optimize import OptimizeInput, OptimizeService

    answer = OptimizeService(_store_with(tmp_path, "items")).optimize(OptimizeInput(sql="SELECT id FROM items"))
    (used,) = answer["statistics"]
    assert used["fingerprint"] is None and used["source_changed"] is None and not answer["warnings"]
