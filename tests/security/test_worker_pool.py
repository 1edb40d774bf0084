"""Heavy requests in worker processes: which requests go there, that they answer exactly as a thread would,
and that the time limit kills a worker that does not stop by itself (and a new one takes its place)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from costmodel.deadline import DeadlineExceeded
from costmodel.errors import ServiceError
from service.history.record import build_record, request_dict
from service.optimize import OptimizeService, answer_body
from service.request import parse_optimize_request
from service.request_weight import CHUNK_BYTES, check_weight, request_weight
from service.settings import Settings
from service.worker_pool import HeavyTask, WorkerPool, _outcome, _serve_one, record_view, request_view
from tests.security import heavy_work, hostile

ROOT = Path(__file__).resolve().parents[2]
TPCH = ROOT / "bench" / "tpch"
#: Scheduling on a busy 2-core machine, and a new worker importing the engine.
MARGIN_S = 8.0


def tpch_bodies() -> Iterator[tuple[str, bytes]]:
    catalog = json.loads((TPCH / "catalog.json").read_text())
    for path in sorted((TPCH / "plans").glob("*.json")):
        yield path.name, json.dumps({"plan": json.loads(path.read_text()), "catalog": catalog}).encode()
    for path in sorted((TPCH / "queries").glob("*.sql")):
        yield path.name, json.dumps({"sql": path.read_text(), "catalog": catalog}).encode()


def test_typical_requests_stay_on_threads_and_the_hostile_ones_go_to_workers() -> None:
    settings = Settings(_env_file=None)
    light = {name: request_weight(body) for name, body in tpch_bodies()}
    assert len(light) >= 44 and max(light.values()) < settings.heavy_request_weight / 2, light
    heavy = {
        "2000 OR terms": hostile.or_terms(2000),
        "2000 or terms, lower case": hostile.or_terms(2000).replace(b" OR ", b" or "),
        "500 joins": hostile.joins(500),
        "300-branch UNION ALL": hostile.union_branches(300),
        "900 KB of SQL": hostile.sql_of_size(900_000),
        "10000 levels deep": hostile.deep(10_000),
    }
    for name, body in heavy.items():
        assert request_weight(body) >= settings.heavy_request_weight, name


def settings_for(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, history_enabled=False)


def run(pool: WorkerPool, raw: bytes, seconds: float, ids: tuple[str | None, str | None] = ("id-1", None)) -> Any:
    task = HeavyTask(raw, 2500, 1_000_000, seconds, ids, time.monotonic() + seconds)
    return asyncio.run(pool.run(task))


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerPool]:
    """One real worker process running what the route runs."""
    workers = WorkerPool(settings_for(tmp_path_factory.mktemp("pool")), 1)
    yield workers
    workers.close()


@pytest.mark.parametrize(
    "body", [hostile.or_terms(1200), hostile.union_branches(200), hostile.dumps(hostile.small_request())]
)
def test_a_worker_answers_exactly_what_a_thread_answers(pool: WorkerPool, body: bytes) -> None:
    answered = answer_body(OptimizeService(None), parse_optimize_request(body, 2500), ("id-1", None))
    answer, payload = answered.answer, answered.payload
    heavy = run(pool, body, 120)
    assert heavy.payload == payload
    assert heavy.answer == record_view(answer)


def test_the_history_keeps_the_same_record_from_a_worker_s_views() -> None:
    body = hostile.dumps({**hostile.small_request(), "context": {"pipeline": "p", "task": "t"}})
    request = parse_optimize_request(body, 2500)
    answered = answer_body(OptimizeService(None), request, ("id-1", None), use_cache=False)
    answer, payload = answered.answer, answered.record
    assert answer["decisions"], "the request must make decisions, or the comparison proves little"
    texts = {"request_json": body.decode(), "response_json": payload.decode()}
    when = datetime.now(UTC)
    full = build_record(request_dict(request), answer, **texts, duration_ms=1.0, created_at=when)
    views = build_record(request_view(request), record_view(answer), **texts, duration_ms=1.0, created_at=when)
    assert views == full


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'{"plan": ', "malformed_json"),
        (hostile.or_terms(1200).replace(b"a = 7 ", b"zz = 7 "), None),
        (hostile.literal("1e999"), "invalid_number"),
    ],
)
def test_refusals_come_back_as_the_same_service_errors(pool: WorkerPool, body: bytes, code: str | None) -> None:
    with pytest.raises(ServiceError) as refused:
        run(pool, body, 120)
    assert code is None or refused.value.code == code
    assert refused.value.path.startswith("$")


def test_a_worker_that_stops_at_its_own_deadline_check_answers_time_limit_with_the_limit() -> None:
    """The engine's cooperative check raises ``DeadlineExceeded`` without the limit (a ``ServiceError`` too):
    the worker reports it as the deadline, so the answer names the limit like one cut off from outside."""
    task = HeavyTask(hostile.or_terms(1200), 2500, 1_000_000, 2.5, ("id-1", None), time.monotonic() - 1)
    kind, value = _serve_one(OptimizeService(None), task)
    assert (kind, value) == ("deadline", None)
    with pytest.raises(DeadlineExceeded) as stopped:
        _outcome(kind, value, task.limit_s)
    assert stopped.value.to_wire()["detail"] == {"limit_s": 2.5}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # the process may be reaped between the signal and the read
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_a_worker_that_ignores_the_deadline_is_killed_and_replaced(tmp_path: Path) -> None:
    workers = WorkerPool(settings_for(tmp_path), 1, serve=heavy_work.by_body)
    try:
        first = int(run(workers, b"pid", 60).payload)
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            run(workers, b"spin", 1.0)
        assert time.monotonic() - started < 1.0 + MARGIN_S
        assert workers.killed == 1
        deadline = time.monotonic() + 10
        while alive(first) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(first), "the worker was not killed"
        second = int(run(workers, b"pid", 60).payload)
        assert second != first and alive(second)
    finally:
        workers.close()


def test_a_worker_that_dies_is_a_clear_failure_and_the_next_request_gets_a_new_one(tmp_path: Path) -> None:
    workers = WorkerPool(settings_for(tmp_path), 1, serve=heavy_work.by_body)
    try:
        with pytest.raises(RuntimeError, match="worker process ended"):
            run(workers, b"exit", 60)
        assert int(run(workers, b"pid", 60).payload) > 0
    finally:
        workers.close()


def test_requests_beyond_the_workers_wait_within_their_own_deadline(tmp_path: Path) -> None:
    workers = WorkerPool(settings_for(tmp_path), 1, serve=heavy_work.by_body)
    run(workers, b"pid", 60)  # started and ready

    async def both() -> list[BaseException | None]:
        tasks = [HeavyTask(b"spin", 2500, 10, 1.5, (None, None), time.monotonic() + 1.5) for _ in range(2)]
        outcomes = await asyncio.gather(*(workers.run(task) for task in tasks), return_exceptions=True)
        return [o if isinstance(o, BaseException) else None for o in outcomes]

    try:
        started = time.monotonic()
        outcomes = asyncio.run(both())
        assert all(isinstance(o, DeadlineExceeded) for o in outcomes), outcomes
        assert time.monotonic() - started < 1.5 + MARGIN_S
        assert workers.killed == 1  # the second never got a worker: it was refused, not started
    finally:
        workers.close()


def test_a_worker_still_starting_at_the_deadline_is_kept_for_the_next_request(tmp_path: Path) -> None:
    workers = WorkerPool(settings_for(tmp_path), 1, serve=heavy_work.by_body)
    try:
        with pytest.raises(DeadlineExceeded):
            run(workers, b"spin", 0.01)  # the new worker is still importing: the spin is never sent
        assert workers.killed == 0
        assert int(run(workers, b"pid", 60).payload) > 0
        assert workers.killed == 0
    finally:
        workers.close()


def test_closing_the_pool_stops_its_workers(tmp_path: Path) -> None:
    workers = WorkerPool(settings_for(tmp_path), 2, serve=heavy_work.by_body)
    pid = int(run(workers, b"pid", 60).payload)
    workers.close()
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_what_weighs_more_than_the_limit_is_too_complex_naming_the_setting() -> None:
    body = hostile.or_terms(60_000)
    weight = request_weight(body)
    exact = 59_999 + 1 + 5  # OR, SELECT, JSON objects; slice boundaries may cut a few
    assert exact - len(body) // CHUNK_BYTES <= weight <= exact
    check_weight(weight, weight, 10.0)
    with pytest.raises(ServiceError) as refused:
        check_weight(weight, weight - 1, 10.0)
    assert refused.value.code == "too_complex" and refused.value.detail == {"limit": weight - 1, "weight": weight}
    assert "PUSHDOWN_MAX_REQUEST_WEIGHT" in refused.value.message


@pytest.mark.parametrize("body", [hostile.union_branches(3000), hostile.sql_of_size(900_000)])
def test_weighing_a_slice_at_a_time_misses_at_most_what_the_slice_boundaries_cut(body: bytes) -> None:
    lowered = body.lower()
    markers = (b" or ", b"\\nor ", b" and ", b"\\nand ", b"join ", b"union ", b"select ")
    whole = body.count(b"{") + sum(lowered.count(m) for m in markers)
    assert len(body) > 4 * CHUNK_BYTES
    assert whole - len(body) // CHUNK_BYTES <= request_weight(body) <= whole


def test_until_a_worker_has_started_heavy_requests_stay_on_threads(tmp_path: Path) -> None:
    workers = WorkerPool(settings_for(tmp_path), 1, serve=heavy_work.by_body)
    try:
        assert not workers.started()
        workers.warm()
        deadline = time.monotonic() + 120
        while not workers.started() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert workers.started()
        assert int(run(workers, b"pid", 60).payload) > 0
        assert workers.killed == 0
    finally:
        workers.close()
