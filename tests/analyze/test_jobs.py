"""The background job runner: states, progress and failures, without Spark."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from service.jobs import Job, JobRunner, error_message


def wait(runner: JobRunner, job_id: str, timeout: float = 10) -> Job:
    deadline = time.monotonic() + timeout
    while True:
        job = runner.get(job_id)
        assert job is not None
        if job.state in ("succeeded", "failed") or time.monotonic() > deadline:
            return job
        time.sleep(0.01)


def test_a_job_reports_progress_and_its_result() -> None:
    runner = JobRunner()
    release = threading.Event()

    def body(progress: Callable[[str, int, float], None]) -> dict[str, int]:
        progress("statistics", 500, 40.0)
        release.wait(5)
        return {"version": 3}

    job = runner.submit("analyze", "t", body)
    assert job.state == "queued" and job.target == "t"
    deadline = time.monotonic() + 5
    while runner.get(job.id).stage != "statistics" and time.monotonic() < deadline:  # type: ignore[union-attr]
        time.sleep(0.01)
    running = runner.get(job.id)
    assert running is not None and (running.state, running.rows_seen, running.percent) == ("running", 500, 40.0)
    release.set()
    done = wait(runner, job.id)
    assert (done.state, done.percent, done.result, done.error) == ("succeeded", 100.0, {"version": 3}, None)
    assert done.started_at and done.finished_at
    runner.shutdown()


def test_a_failing_job_reports_its_message_without_a_trace() -> None:
    runner = JobRunner()

    def body(progress: Callable[[str, int, float], None]) -> dict[str, int]:
        raise RuntimeError("[PATH_NOT_FOUND] Path does not exist: /x.\n\nJVM stacktrace:\norg.apache...")

    done = wait(runner, runner.submit("analyze", "t", body).id)
    assert done.state == "failed" and done.error == "[PATH_NOT_FOUND] Path does not exist: /x."
    assert runner.get("nope") is None
    runner.shutdown()


def test_jobs_run_one_at_a_time_in_order() -> None:
    runner = JobRunner()
    order: list[int] = []
    active = []

    def body(i: int) -> Callable[[Callable[[str, int, float], None]], dict[str, int]]:
        def run(progress: Callable[[str, int, float], None]) -> dict[str, int]:
            active.append(i)
            assert len(active) == 1
            time.sleep(0.01)
            order.append(i)
            active.remove(i)
            return {}

        return run

    ids = [runner.submit("analyze", "t", body(i)).id for i in range(5)]
    assert all(wait(runner, i).state == "succeeded" for i in ids)
    assert order == list(range(5))
    runner.shutdown()


def test_error_message_of_an_empty_exception() -> None:
    assert error_message(KeyError()) == "KeyError (details in the server log)"


def test_error_message_is_one_line_of_our_own_errors() -> None:
    assert error_message(ValueError("format must be parquet\n  more detail")) == "format must be parquet"
