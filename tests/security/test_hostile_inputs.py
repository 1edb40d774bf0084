"""Issue 15's hostile inputs against a real service process: each is answered or refused within the time limit,
with a JSON path where a value is at fault, while /healthz keeps answering; refused work really stops."""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.security import hostile
from tests.security.conftest import (
    LIMIT_S,
    TOKEN,
    HealthProbe,
    ServiceProcess,
    auth_headers,
    running_service,
    wait_for_workers,
    wait_until_idle,
)

#: What the time limit may be exceeded by before the answer is in: scheduling on a busy 2-core machine.
MARGIN_S = 4.0
#: Loose bound on any single /healthz answer while heavy requests run (the bench holds the 100 ms target).
HEALTHZ_MAX_S = 1.0


def post(service: ServiceProcess, body: bytes) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = httpx.post(f"{service.url}/optimize", content=body, headers=auth_headers(), timeout=LIMIT_S + 60)
    return response, time.monotonic() - started


def assert_refused_at(response: httpx.Response, status: int, code: str | None, path_prefix: str) -> None:
    """A refusal in the service's shape; ``code`` None: any code (whichever check sees it first)."""
    assert response.status_code == status, response.text
    body = response.json()
    assert code is None or body["error"] == code, body
    assert body["path"].startswith(path_prefix), body
    assert "Traceback" not in response.text


VALUE_CASES: dict[str, tuple[Callable[[], bytes], str, str]] = {
    "literal 1e999": (lambda: hostile.literal("1e999"), "invalid_number", "$.plan.input.predicate.args[1].lit"),
    "literal -1e999": (lambda: hostile.literal("-1e999"), "invalid_number", "$.plan.input.predicate.args[1].lit"),
    "5000-digit integer": (lambda: hostile.literal("9" * 5000), "invalid_number", "$.plan.input.predicate.args[1].lit"),
    "400-digit row count": (
        lambda: hostile.row_count("9" * 400),
        "invalid_number",
        "$.catalog.tables.cities.row_count",
    ),
    "lone surrogate value": (hostile.lone_surrogate_value, "invalid_string", "$.context.pipeline"),
    "lone surrogate key": (hostile.lone_surrogate_key, "invalid_string", "$.catalog.tables.cities.column_stats"),
    "10000 levels deep": (lambda: hostile.deep(10_000), "too_deep", "$"),
    "100000 unknown cost names": (lambda: hostile.wide_options(100_000), "invalid_options", "$.options.operator_costs"),
}


@pytest.mark.parametrize("name", list(VALUE_CASES))
def test_values_json_allows_get_a_4xx_with_their_path(service: ServiceProcess, name: str) -> None:
    make, code, path = VALUE_CASES[name]
    response, elapsed = post(service, make())
    assert_refused_at(response, 422, code, path)
    assert elapsed < LIMIT_S + MARGIN_S


@pytest.mark.parametrize("value", ["1e308", "1.7976931348623157e308", "1e300"])
@pytest.mark.parametrize("where", ["costs", "row_count"])
def test_huge_finite_numbers_work_or_name_the_number(service: ServiceProcess, value: str, where: str) -> None:
    body = hostile.with_costs(float(value)) if where == "costs" else hostile.row_count(value)
    response, _ = post(service, body)
    if response.status_code == 200:  # it worked: then every number in the answer is a JSON number
        json.loads(response.text, parse_constant=lambda c: pytest.fail(f"{c} in the answer"))
        return
    prefix = "$.options.operator_costs" if where == "costs" else "$.catalog.tables.cities.row_count"
    assert_refused_at(response, 422, None, prefix)


def test_a_body_over_the_limit_is_413(service: ServiceProcess) -> None:
    body = b'{"sql": "' + b"x" * (11 * 1024 * 1024) + b'"}'
    response, _ = post(service, body)
    assert_refused_at(response, 413, "body_too_large", "$")


def test_five_mib_of_sql_is_refused_at_once(service: ServiceProcess) -> None:
    response, elapsed = post(service, hostile.sql_of_size(5 * 1024 * 1024))
    assert_refused_at(response, 422, None, "$")
    assert response.json()["error"] in ("too_complex", "sql_too_long")  # by its weight, checked first
    assert elapsed < LIMIT_S + MARGIN_S


def test_what_could_never_finish_is_refused_at_once_naming_the_setting(service: ServiceProcess) -> None:
    response, elapsed = post(service, hostile.sql_of_size(900_000))  # 70,000 OR terms
    assert_refused_at(response, 422, "too_complex", "$")
    assert "PUSHDOWN_MAX_REQUEST_WEIGHT" in response.json()["message"]
    assert response.json()["detail"]["limit"] == 50_000
    assert elapsed < LIMIT_S, f"{elapsed:.1f} s: refused only after computing"


HEAVY_CASES: dict[str, Callable[[], bytes]] = {
    "4000 OR terms": lambda: hostile.or_terms(4000),
    "20000 OR terms": lambda: hostile.or_terms(20_000),
    "500 joins": lambda: hostile.joins(500),
    "3000-branch UNION ALL": lambda: hostile.union_branches(3000),
    "900 KB of SQL": lambda: hostile.sql_of_size(900_000),
}


@pytest.mark.parametrize("name", list(HEAVY_CASES))
def test_heavy_requests_end_within_the_limit_and_healthz_answers_meanwhile(service: ServiceProcess, name: str) -> None:
    body = HEAVY_CASES[name]()
    with HealthProbe(service.url) as probe:
        response, elapsed = post(service, body)
    assert elapsed < LIMIT_S + MARGIN_S, f"{name}: {elapsed:.1f} s"
    assert response.status_code in (200, 422, 503), response.text
    if response.status_code == 503:
        assert response.json()["error"] == "time_limit" and response.json()["detail"] == {"limit_s": LIMIT_S}
    assert not probe.failures, probe.failures
    assert probe.latencies, "healthz was never answered"
    # The figure is under 100 ms (bench/hostile_inputs.py holds it); here loose bounds that a shared,
    # busy machine still meets: the median, and every single answer within a second.
    assert probe.median() < 0.1, f"{name}: healthz {probe.summary()}"
    assert max(probe.latencies) < HEALTHZ_MAX_S, f"{name}: healthz {probe.summary()}"


def test_all_heavy_requests_at_once_end_within_the_limit_and_healthz_answers_meanwhile(
    service: ServiceProcess,
) -> None:
    bodies = [make() for make in HEAVY_CASES.values()]
    outcomes: list[tuple[int, float]] = []

    def send(body: bytes) -> None:
        response, elapsed = post(service, body)
        outcomes.append((response.status_code, elapsed))

    with HealthProbe(service.url) as probe:
        senders = [threading.Thread(target=send, args=(body,)) for body in bodies]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(timeout=LIMIT_S + 60)
    assert len(outcomes) == len(bodies)
    for status, elapsed in outcomes:
        assert status in (200, 422, 503) and elapsed < LIMIT_S + MARGIN_S, outcomes
    assert not probe.failures, probe.failures
    assert probe.median() < 0.1 and max(probe.latencies) < HEALTHZ_MAX_S, f"healthz {probe.summary()}"


@pytest.mark.parametrize(
    ("body", "settle_s"),
    [
        # minutes of work if not stopped; a killed worker's replacement imports the engine meanwhile
        (lambda: hostile.union_branches(3000), 45.0),
        (lambda: hostile.joins(300), 5.0),  # light (weight ~900), so on a thread; tens of seconds if not stopped
    ],
    ids=["heavy, in a worker process", "light, on a thread"],
)
def test_work_stopped_at_the_limit_stops_using_the_cpu(
    tmp_path: Path, body: Callable[[], bytes], settle_s: float
) -> None:
    with running_service(tmp_path, warm=False, api_token=TOKEN, request_time_limit_s="0.3") as service:
        wait_until_idle(service)  # the workers, started with the service, have imported the engine
        response, _ = post(service, body())
        if response.status_code != 503:
            pytest.skip("the request finished within the limit on this machine: nothing was stopped")
        wait_until_idle(service, timeout_s=settle_s)  # raises if the work goes on
        before, started = service.cpu_seconds(), time.monotonic()
        time.sleep(2.0)
        busy = (service.cpu_seconds() - before) / (time.monotonic() - started)
        assert busy < 0.5, f"the service and its workers kept {busy:.0%} of a core busy after answering 503"


def test_a_heavy_request_answered_by_a_worker_is_recorded_like_any_other(service: ServiceProcess) -> None:
    wait_for_workers(service)  # those killed by earlier tests have been replaced
    request = hostile.small_request()
    unused = {f"t{i}": {"columns": [{"name": "a", "type": "int"}]} for i in range(600)}
    request["catalog"]["tables"] = {**request["catalog"]["tables"], **unused}  # heavy by weight, quick to answer
    request["detail"] = "full"  # the decision matrix, to compare with the history's counts
    response, _ = post(service, hostile.dumps(request))
    assert response.status_code == 200, response.text
    assert response.headers["Pushdown-History"] == "recorded"
    answer = response.json()
    assert answer["decisions"]
    stored = httpx.get(
        f"{service.url}/api/optimizations/{answer['request_id']}", headers=auth_headers(), timeout=30
    ).json()
    assert stored["response"] == answer
    # the columns the history derives from the worker's views of request and answer
    for action in ("pushed", "kept", "blocked"):
        assert stored[action] == sum(d["action"] == action for d in answer["decisions"]), action
    assert stored["input_form"] == "plan" and stored["cost_after"] == answer["cost"]["after"]["total"]


def test_the_service_still_answers_normally_afterwards(service: ServiceProcess) -> None:
    response, _ = post(service, hostile.dumps(hostile.small_request()))
    assert response.status_code == 200, response.text
    assert math.isfinite(response.json()["cost"]["after"]["total"])
