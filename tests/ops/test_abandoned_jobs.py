"""Analyze jobs a killed service process left ``running`` are marked failed, with the reason, when a service
starts on the same database; jobs another live process runs are left alone."""

from __future__ import annotations

import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from service.database import backend_from_url
from service.job_store import STALE_AFTER_S, DatabaseJobStates
from service.jobs import Job, JobRunner
from tests.ops.test_serve import serving
from tests.ops.test_shared_jobs import database_url  # noqa: F401 (the SQLite and PostgreSQL fixture)
from tests.serving import free_port

ROOT = Path(__file__).resolve().parents[2]


def _set(url: str, job_id: str, owner: str, idle_s: float = 0.0) -> None:
    """Give a job another owner, last changed ``idle_s`` ago (what another process would have written)."""
    backend = backend_from_url(url)
    con = backend.open()
    try:
        changed = backend.timestamp(dt.datetime.now(dt.UTC) - dt.timedelta(seconds=idle_s))
        con.cursor().execute(
            backend.sql("UPDATE analyze_jobs SET owner = ?, updated_at = ? WHERE id = ?"), (owner, changed, job_id)
        )
        con.commit()
    finally:
        con.close()


def _dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_only_jobs_whose_process_is_gone_are_failed(database_url: str) -> None:  # noqa: F811
    store = DatabaseJobStates(backend_from_url(database_url))
    host = socket.gethostname()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        jobs = {name: Job(id=name, kind="analyze", target=f"t_{name}") for name in ("dead", "live", "near", "far")}
        jobs["done"] = Job(id="done", kind="analyze", target="t", state="succeeded", finished_at="2026-01-01T00:00:00")
        for job in jobs.values():
            store.add(job)
        store.update("dead", state="running", stage="statistics", started_at="2026-01-01T00:00:00+00:00")
        dead = _dead_pid()
        _set(database_url, "dead", f"{host}:{dead}")
        _set(database_url, "live", f"{host}:{live.pid}", idle_s=10 * STALE_AFTER_S)  # old, but its process runs
        _set(database_url, "near", "other-host:1", idle_s=60)  # another host's, recently changed
        _set(database_url, "far", "other-host:1", idle_s=2 * STALE_AFTER_S)  # another host's, silent for long
        _set(database_url, "done", f"{host}:{dead}")

        failed = {job.id: job for job in store.fail_abandoned()}

        assert set(failed) == {"dead", "far"}
        assert failed["dead"].error == (
            f"the service process that ran this job (pid {dead} on {host}) stopped before it finished; run it again"
        )
        assert failed["dead"].finished_at is not None and failed["dead"].stage == "statistics"
        assert "has not changed for 120 min" in (failed["far"].error or "") and "on other-host" in failed["far"].error
        states = {job.id: job.state for job in store.jobs()}
        assert states == {"dead": "failed", "live": "queued", "near": "queued", "far": "failed", "done": "succeeded"}
        assert store.fail_abandoned() == []  # nothing left to fail
    finally:
        live.kill()
        live.wait()


def test_a_fresh_runner_s_own_jobs_are_not_failed(database_url: str) -> None:  # noqa: F811
    """The jobs this process accepted name this process: its own check leaves a job it is running alone."""
    runner = JobRunner(DatabaseJobStates(backend_from_url(database_url)))
    release = threading.Event()

    def body(progress: object) -> dict[str, str]:
        release.wait(20)
        return {}

    job = runner.submit("analyze", "t", body)
    try:
        other = DatabaseJobStates(backend_from_url(database_url))
        deadline = time.monotonic() + 20
        while other.get(job.id).state != "running":  # type: ignore[union-attr]
            assert time.monotonic() < deadline
            time.sleep(0.02)
        # Another live process on this host starting up (its pid is not this one) leaves the job alone.
        checker = textwrap.dedent(
            f"""
            from service.database import backend_from_url
            from service.job_store import DatabaseJobStates
            print(len(DatabaseJobStates(backend_from_url({database_url!r})).fail_abandoned()))
            """
        )
        done = subprocess.run(
            [sys.executable, "-c", checker],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.stdout.strip() == "0", done.stderr
        assert other.get(job.id).state == "running"  # type: ignore[union-attr]
    finally:
        release.set()
        runner.shutdown(wait=True)


@pytest.mark.slow
def test_a_service_starting_after_a_kill_fails_the_job_the_killed_process_ran(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    url = f"sqlite:///{data / 'pushdown.db'}"
    data.mkdir()
    # A service process with an analyze job running (its body waits), killed with SIGKILL: no shutdown code runs.
    worker = textwrap.dedent(
        f"""
        import threading
        from service.database import backend_from_url
        from service.job_store import DatabaseJobStates
        from service.jobs import JobRunner

        runner = JobRunner(DatabaseJobStates(backend_from_url({url!r})))

        def body(progress):
            progress("sample", 1200, 35.0)
            print("running", flush=True)
            threading.Event().wait()

        job = runner.submit("analyze", "events", body)
        print(job.id, flush=True)
        threading.Event().wait()
        """
    )
    env = {**clean_env, "PYTHONPATH": str(ROOT)}
    killed = subprocess.Popen([sys.executable, "-c", worker], env=env, stdout=subprocess.PIPE, text=True)
    assert killed.stdout is not None
    job_id = killed.stdout.readline().strip()
    assert killed.stdout.readline().strip() == "running"
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    killed.stdout.close()
    store = DatabaseJobStates(backend_from_url(url))
    assert store.get(job_id).state == "running"  # type: ignore[union-attr]

    port = free_port()
    with serving(["--port", str(port)], {**env, "PUSHDOWN_DATA_DIR": str(data)}, tmp_path, port) as (http, lines, _):
        job = http.get(f"/jobs/{job_id}").json()
        metrics = http.get("/metrics").text
    assert job["state"] == "failed"
    assert job["error"] == (
        f"the service process that ran this job (pid {killed.pid} on {socket.gethostname()}) stopped before it "
        "finished; run it again"
    )
    assert (job["stage"], job["rows_seen"], job["finished_at"] is not None) == ("sample", 1200, True)
    assert 'pushdown_analyze_jobs{state="running"} 0.0' in metrics or 'state="running"' not in metrics
    assert any(job_id in line and "marked failed" in line for line in lines), lines[-20:]
