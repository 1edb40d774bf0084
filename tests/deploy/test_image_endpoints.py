"""Every endpoint, requested in an environment installed as the image installs the project (its declared
dependencies only): a dependency only the test extra brings (protobuf for Substrait, say) fails here."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from datafusion import SessionContext
from datafusion.substrait import Producer

from api.app import create_app
from tests.analyze.conftest import make_table, write_parquet
from tests.deploy.image_env import image_like_venv
from tests.deploy.test_deployment import _image_context
from tests.ops.test_api_docs import served
from tests.serving import free_port, wait_for_health
from tests.spark_session import java_available

TOKEN = "image-token"
CATALOG = {
    "tables": {
        "cities": {
            "columns": [{"name": "id", "type": "bigint"}, {"name": "name", "type": "string"}],
            "row_count": 20000,
        }
    }
}


def substrait_request() -> dict[str, Any]:
    """A Substrait plan as DataFusion produces it (the test extra has DataFusion; the image need not)."""
    ctx = SessionContext()
    ctx.from_pydict({"id": [1, 2], "name": ["Austin", "Boston"]}, name="cities")
    plan = Producer.to_substrait_plan(ctx.sql("SELECT name FROM cities WHERE name LIKE 'A%'").logical_plan(), ctx)
    return {"substrait": json.loads(plan.to_json()), "catalog": CATALOG}


@pytest.mark.slow
@pytest.mark.timeout(600)  # an install, a service and an analyze job with its own Spark
def test_every_endpoint_answers_in_an_environment_installed_like_the_image(
    tmp_path: Path, clean_env: dict[str, str], make_settings: Any
) -> None:
    if not java_available():
        pytest.skip("no Java runtime: the analyze job needs Spark")
    bin_dir = image_like_venv(tmp_path, _image_context(tmp_path / "context"))
    table = write_parquet(make_table(2_000).select(["id", "skew", "category"]), tmp_path / "events", row_group=500)
    port = free_port()
    env = {
        **clean_env,
        "PYTHONPATH": "",  # the installed copy, not the checkout
        "PUSHDOWN_API_TOKEN": TOKEN,
        "PUSHDOWN_PORT": str(port),
        "PUSHDOWN_DATA_DIR": str(tmp_path / "state"),
        "PUSHDOWN_SPARK_MASTER": "local[1]",
        "PUSHDOWN_DATA_ROOTS": str(tmp_path),  # analyze may read only under the data roots
    }
    log = (tmp_path / "service.log").open("w")
    server = subprocess.Popen([bin_dir / "pushdown", "serve"], cwd=tmp_path, env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    requested: dict[tuple[str, str], int] = {}
    try:
        wait_for_health(base, server, 90, output=(tmp_path / "service.log").read_text)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:

            def call(method: str, template: str, url: str, expected: int = 200, **kwargs: Any) -> httpx.Response:
                response = http.request(method, url, **kwargs)
                assert response.status_code == expected, f"{method} {url}: {response.status_code} {response.text}"
                requested[(method, template)] = response.status_code
                return response

            call("GET", "/healthz", "/healthz")
            plan = {"op": "filter", "predicate": {"fn": ">", "args": [{"col": "id"}, {"lit": 3}]},
                    "input": {"op": "scan", "table": "cities"}}  # fmt: skip
            context = {"pipeline": "image", "task": "check"}
            answer = call(
                "POST", "/optimize", "/optimize", json={"plan": plan, "catalog": CATALOG, "context": context}
            ).json()
            sql = call("POST", "/optimize", "/optimize", json={"sql": "SELECT id FROM cities WHERE id > 3",
                                                               "catalog": CATALOG}).json()  # fmt: skip
            assert "sql" in sql
            substrait = call("POST", "/optimize", "/optimize", json={**substrait_request(), "detail": "full"}).json()
            assert "substrait" in substrait and substrait["decisions"]
            started = call("POST", "/tables/{name}/analyze", "/tables/events/analyze", 202, json={"path": str(table)})
            job_url = started.json()["status_url"]
            deadline = time.monotonic() + 240
            while (job := call("GET", "/jobs/{job_id}", job_url).json())["state"] not in ("succeeded", "failed"):
                assert time.monotonic() < deadline, job
                time.sleep(0.5)
            assert job["state"] == "succeeded", job["error"]
            assert [t["name"] for t in call("GET", "/tables", "/tables").json()["tables"]] == ["events"]
            assert call("GET", "/tables/{name}", "/tables/events").json()["statistics"]["row_count"] == 2_000
            by_name = call("POST", "/optimize", "/optimize", json={"sql": "SELECT id FROM events WHERE skew = 1"})
            assert by_name.json()["statistics"][0]["analyzed_table"] == "events"
            time.sleep(0.5)  # the history writer's batch
            call("GET", "/api/optimizations", "/api/optimizations")
            call("GET", "/api/optimizations/{record_id}", f"/api/optimizations/{answer['request_id']}")
            call("GET", "/api/savings", "/api/savings")
            nodes = [{"id": answer["plan"]["id"], "rows_out": 3}]
            call("POST", "/feedback/{request_id}", f"/feedback/{answer['request_id']}", json={"nodes": nodes})
            runs = call("GET", "/api/feedback/runs", "/api/feedback/runs", params=context).json()
            assert len(runs) == 1
            call("GET", "/api/history/status", "/api/history/status")
            assert "pushdown_http_requests_total" in call("GET", "/metrics", "/metrics").text
            assert call("GET", "/openapi.json", "/openapi.json").json()["paths"]
            assert "swagger-ui" in call("GET", "/docs", "/docs").text
            call("GET", "/docs/assets/{name}", "/docs/assets/swagger-ui-bundle.js")
            page = call("GET", "/dashboard", "/dashboard").text
            asset = next(
                part.split('"')[0] for part in page.split('src="')[1:] if part.startswith("/dashboard/assets/")
            )
            call("GET", "/dashboard/assets/{file}", asset)
            call("POST", "/dashboard/login", "/dashboard/login", 204, json={"token": TOKEN})
            assert call("GET", "/dashboard/session", "/dashboard/session").json()["signed_in"] is True
            call("POST", "/dashboard/logout", "/dashboard/logout", 204, json={})  # POST bodies must be JSON
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    every = served(create_app(make_settings())) - {("GET", "/dashboard/")}
    assert set(requested) == every, f"endpoints this test does not request: {sorted(every - set(requested))}"
