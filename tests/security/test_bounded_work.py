"""The time limit stops the work itself, not only the wait for it; the cap on concurrent work holds; the
analyze Spark session is stopped when idle and at shutdown; SIGTERM during a heavy request does not hang."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from costmodel.deadline import DeadlineExceeded, check_deadline, deadline_scope, remaining
from service.bounded import BoundedRunner
from service.idle_spark import IdleSpark
from tests.security import hostile
from tests.security.conftest import LIMIT_S, auth_headers, running_service
from tests.serving import wait_until


def work_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "pushdown-work"]


def spin_forever() -> None:
    """Pure Python that never checks a deadline: only an interrupt stops it."""
    n = 0
    while True:
        n += 1


def test_a_loop_that_never_checks_is_stopped_at_the_deadline() -> None:
    runner = BoundedRunner(limit_s=0.3, max_concurrent=2)

    async def main() -> None:
        with pytest.raises(DeadlineExceeded):
            await runner.run(spin_forever, deadline=runner.deadline())

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < 3
    assert wait_until(lambda: not work_threads()), "the work thread is still running"
    assert runner.interrupted == 1


def test_a_loop_that_checks_stops_by_itself() -> None:
    runner = BoundedRunner(limit_s=0.2, max_concurrent=1)
    seen: list[float | None] = []

    def cooperative() -> None:
        seen.append(remaining())
        while True:
            check_deadline()

    async def main() -> None:
        with pytest.raises(DeadlineExceeded):
            await runner.run(cooperative, deadline=runner.deadline())

    asyncio.run(main())
    assert seen and seen[0] is not None and 0 < seen[0] <= 0.2
    assert runner.interrupted == 0  # it noticed the deadline itself, within the grace
    assert wait_until(lambda: not work_threads())


def test_results_and_errors_come_back_unchanged() -> None:
    runner = BoundedRunner(limit_s=5, max_concurrent=2)

    async def main() -> None:
        assert await runner.run(lambda a, b: a + b, 2, 3, deadline=runner.deadline()) == 5
        with pytest.raises(KeyError):
            await runner.run({}.__getitem__, "x", deadline=runner.deadline())

    asyncio.run(main())


def test_no_deadline_outside_a_scope_and_scopes_nest() -> None:
    assert remaining() is None
    check_deadline()
    with deadline_scope(10):
        outer = remaining()
        with deadline_scope(None):
            assert remaining() is None
        assert remaining() is not None and outer is not None
    with deadline_scope(-1), pytest.raises(DeadlineExceeded):
        check_deadline()


def test_at_most_max_concurrent_run_at_once_and_a_slot_frees_only_when_its_thread_ends() -> None:
    runner = BoundedRunner(limit_s=0.5, max_concurrent=2)
    running, peak = [0], [0]
    lock = threading.Lock()

    def busy() -> None:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            end = time.monotonic() + 0.1
            while time.monotonic() < end:
                pass
        finally:
            with lock:
                running[0] -= 1

    async def main() -> list[Any]:
        deadline = time.monotonic() + 5
        return await asyncio.gather(*(runner.run(busy, deadline=deadline) for _ in range(6)), return_exceptions=True)

    results = asyncio.run(main())
    assert results == [None] * 6 and peak[0] == 2


def test_a_request_waiting_for_a_slot_past_its_deadline_is_refused() -> None:
    runner = BoundedRunner(limit_s=0.3, max_concurrent=1)

    async def main() -> tuple[Any, Any]:
        first = asyncio.ensure_future(runner.run(spin_forever, deadline=runner.deadline()))
        await asyncio.sleep(0.05)
        second = await asyncio.gather(runner.run(lambda: 1, deadline=runner.deadline()), return_exceptions=True)
        return await asyncio.gather(first, return_exceptions=True), second

    first, second = asyncio.run(main())
    assert isinstance(first[0], DeadlineExceeded) and isinstance(second[0], DeadlineExceeded)
    assert wait_until(lambda: not work_threads())


# ---------------------------------------------------------------- the analyze Spark session


class RecordingSession:
    """Stands in for a SparkSession: IdleSpark only ever calls stop() on it."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def stop(self) -> None:
        self.log.append("stop")


def test_the_analyze_session_is_stopped_when_idle_and_restarted_on_demand() -> None:
    log: list[str] = []

    def factory() -> Any:
        log.append("start")
        return RecordingSession(log)

    spark = IdleSpark(factory, idle_s=0.2)
    with spark.session():
        time.sleep(0.4)  # a long job: not idle, not stopped
        assert log == ["start"]
    assert wait_until(lambda: log == ["start", "stop"], 5) and not spark.running
    with spark.session(), spark.session():  # two jobs share one session
        pass
    assert log == ["start", "stop", "start"]
    spark.close()
    assert log == ["start", "stop", "start", "stop"]
    with pytest.raises(RuntimeError), spark.session():
        pass


def test_the_app_stops_its_analyze_session_at_shutdown(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from api.app import create_app
    from tests.conftest import _make_settings

    app = create_app(_make_settings(data_dir=tmp_path))
    log: list[str] = []
    analyzer = app.state.analyzer
    analyzer.spark = IdleSpark(lambda: RecordingSession(log), idle_s=3600)
    with TestClient(app):
        with analyzer.spark.session():
            pass
        assert log == []  # idle, but not for an hour
    assert log == ["stop"]


# ---------------------------------------------------------------- SIGTERM


def test_sigterm_during_a_heavy_request_does_not_hang(tmp_path: Path) -> None:
    with running_service(tmp_path, shutdown_grace_s="2") as service:
        result: dict[str, Any] = {}

        def heavy() -> None:
            try:
                response = httpx.post(
                    f"{service.url}/optimize", content=hostile.union_branches(3000), headers=auth_headers(), timeout=60
                )
                result["status"] = response.status_code
            except httpx.HTTPError as exc:
                result["error"] = repr(exc)

        client = threading.Thread(target=heavy)
        client.start()
        time.sleep(1.0)  # the request is in and computing
        started = time.monotonic()
        service.process.send_signal(signal.SIGTERM)
        service.process.wait(timeout=LIMIT_S + 20)
        took = time.monotonic() - started
        client.join(timeout=30)
    assert service.process.returncode is not None
    assert took < LIMIT_S + 10, f"shutdown took {took:.1f} s"
    assert result, "the client never heard back"
    assert "Shutting down" in service.log_text()


def test_the_engine_checks_the_deadline_in_its_loops() -> None:
    from costmodel import optimize_wire

    request = hostile.small_request()
    assert optimize_wire(request["plan"], request["catalog"], None)["plan"]  # no scope: no limit
    with deadline_scope(-1), pytest.raises(DeadlineExceeded):
        optimize_wire(request["plan"], request["catalog"], None)


def test_sigkill_of_the_service_takes_its_worker_processes_along(tmp_path: Path) -> None:
    with running_service(tmp_path) as service:
        deadline = time.monotonic() + 30
        while len(service.worker_pids()) < 2 and time.monotonic() < deadline:  # started with the service
            time.sleep(0.1)
        workers = service.worker_pids()  # and multiprocessing's resource tracker, which must go too
        assert len(workers) >= 2, workers
        service.process.kill()
        service.process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()], "a worker outlived its service"
