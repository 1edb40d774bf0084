"""GET /metrics scrapes in Prometheus text format and counts what the service did (real server, real HTTP)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

from api.app import create_app
from service.settings import Settings
from tests.service.test_cli import REQUEST

Serve = Callable[[FastAPI], AbstractContextManager[str]]
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(http: httpx.Client) -> Samples:
    """Every sample of a scrape, by (name, sorted labels); parsing fails on anything but the text format."""
    response = http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture(scope="module")
def http(serve: Serve, make_settings: Callable[..., Settings]) -> Iterator[httpx.Client]:
    with serve(create_app(make_settings())) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def test_requests_latency_decisions_and_errors_are_counted(http: httpx.Client) -> None:
    before = scrape(http)
    answers = [http.post("/optimize", json={**REQUEST, "detail": "full"}).json() for _ in range(3)]
    bad = http.post("/optimize", json={"plan": {"op": "scan", "table": "nowhere"}, "catalog": {"tables": {}}})
    assert bad.status_code == 422
    http.get("/no/such/route")
    after = scrape(http)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    ok = {"route": "/optimize", "method": "POST", "status": "200"}
    assert delta("pushdown_http_requests_total", **ok) == 3
    assert delta("pushdown_http_request_duration_seconds_count", **ok) == 3
    assert delta("pushdown_http_request_duration_seconds_bucket", **ok, le="+Inf") == 3
    assert delta("pushdown_http_request_duration_seconds_sum", **ok) > 0
    assert delta("pushdown_http_requests_total", route="/optimize", method="POST", status="422") == 1
    assert delta("pushdown_errors_total", error=bad.json()["error"], status="422") == 1
    # a 404 is labelled by no path of the caller's choosing, so a scanner cannot blow up the label set
    assert delta("pushdown_http_requests_total", route="unmatched", method="GET", status="404") == 1
    assert delta("pushdown_errors_total", error="not_found", status="404") == 1
    expected: dict[tuple[str, str], int] = {}
    for answer in answers:
        for decision in answer["decisions"]:
            key = (decision["action"], decision["reason"])
            expected[key] = expected.get(key, 0) + 1
    assert expected
    for (action, reason), count in expected.items():
        assert delta("pushdown_decisions_total", action=action, reason=reason) == count


def test_the_history_queue_and_analyze_jobs_are_gauges(http: httpx.Client) -> None:
    samples = scrape(http)
    assert ("pushdown_history_queue_depth", ()) in samples
    assert value(samples, "pushdown_history_lost", kind="dropped") == 0
    for state in ("queued", "running", "succeeded", "failed"):
        assert ("pushdown_analyze_jobs", (("state", state),)) in samples


def test_metrics_need_the_token_when_one_is_set(serve: Serve, make_settings: Callable[..., Settings]) -> None:
    with serve(create_app(make_settings(api_token="s3cret"))) as url:
        assert httpx.get(f"{url}/metrics").status_code == 401
        response = httpx.get(f"{url}/metrics", headers={"Authorization": "Bearer s3cret"})
        assert response.status_code == 200
        assert any(f.name == "pushdown_http_requests" for f in text_string_to_metric_families(response.text))


def _families(text: str) -> dict[str, Any]:
    return {f.name: f for f in text_string_to_metric_families(text)}


def test_every_metric_has_help_and_a_type(http: httpx.Client) -> None:
    families = _families(http.get("/metrics").text)
    for name in ("pushdown_http_requests", "pushdown_http_request_duration_seconds", "pushdown_decisions"):
        assert families[name].documentation and families[name].type in ("counter", "histogram")
