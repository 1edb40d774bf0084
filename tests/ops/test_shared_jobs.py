"""Analyze jobs' state lives in the service's database, so that with several workers or replicas on one database
any of them answers ``GET /jobs/{id}`` (it answered 404 from every process but the one running the job)."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from service.database import MIGRATIONS, SQLiteBackend, apply_migrations, schema_version
from service.job_store import DatabaseJobStates
from service.jobs import STOPPED_BEFORE_START, Job, JobRunner
from tests.ops.test_serve import serving
from tests.postgres import PostgresServer
from tests.serving import free_port

ROWS = 3000


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'pushdown.db'}"
    postgres: PostgresServer = request.getfixturevalue("postgres")
    return postgres.new_database()


def states(url: str) -> DatabaseJobStates:
    from service.database import backend_from_url

    return DatabaseJobStates(backend_from_url(url))


def wait(read: Any, job_id: str, timeout: float = 20) -> Job:
    deadline = time.monotonic() + timeout
    while True:
        job = read(job_id)
        if job is not None and job.state in ("succeeded", "failed"):
            return job
        assert time.monotonic() < deadline, f"job {job_id} still {job and job.state}"
        time.sleep(0.02)


def test_a_job_run_by_one_runner_is_read_by_another_store_on_the_same_database(database_url: str) -> None:
    runner = JobRunner(states(database_url))
    elsewhere = states(database_url)  # what another process sees
    started, release = threading.Event(), threading.Event()

    def body(progress: Any) -> dict[str, Any]:
        progress("statistics", 500, 40.0)
        started.set()
        release.wait(10)
        return {"version": 3, "tables": ["t"]}

    job = runner.submit("analyze", "t", body)
    assert started.wait(10)
    running = elsewhere.get(job.id)
    assert running is not None and (running.state, running.stage, running.rows_seen, running.percent) == (
        "running",
        "statistics",
        500,
        40.0,
    )
    assert running.created_at == job.created_at and running.started_at
    release.set()
    done = wait(elsewhere.get, job.id)
    assert (done.state, done.percent, done.result, done.error) == (
        "succeeded",
        100.0,
        {"version": 3, "tables": ["t"]},
        None,
    )
    assert done.finished_at >= done.started_at >= done.created_at  # type: ignore[operator]
    assert elsewhere.get("no-such-job") is None
    assert elsewhere.counts() == {"succeeded": 1}
    assert [j.id for j in elsewhere.jobs()] == [job.id]
    runner.shutdown()


def test_a_failure_and_a_job_stopped_before_it_started_are_recorded(database_url: str) -> None:
    runner = JobRunner(states(database_url))
    release = threading.Event()

    def blocking(progress: Any) -> dict[str, Any]:
        release.wait(10)
        raise RuntimeError("[PATH_NOT_FOUND] Path does not exist: /x.\n\nJVM stacktrace: ...")

    first = runner.submit("analyze", "a", blocking)
    queued = runner.submit("analyze", "b", lambda progress: {})
    runner.shutdown(wait=False)  # the service stops: the queued job never starts
    release.set()
    elsewhere = states(database_url)
    failed = wait(elsewhere.get, first.id)
    assert failed.error == "[PATH_NOT_FOUND] Path does not exist: /x."
    stopped = wait(elsewhere.get, queued.id)
    assert (stopped.state, stopped.error, stopped.started_at) == ("failed", STOPPED_BEFORE_START, None)


def test_only_the_newest_finished_jobs_are_kept(database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("service.job_store.MAX_FINISHED_JOBS", 3)
    store = states(database_url)
    for i in range(6):
        stamp = f"2026-01-01T00:00:0{i}+00:00"
        store.add(Job(id=f"j{i}", kind="analyze", target="t", state="succeeded", created_at=stamp, finished_at=stamp))
    store.add(Job(id="q", kind="analyze", target="t"))
    assert sorted(j.id for j in store.jobs()) == ["j3", "j4", "j5", "q"]  # a queued job is never forgotten


def test_an_older_database_gets_the_jobs_table_and_keeps_its_rows(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "old.db")
    assert apply_migrations(backend, MIGRATIONS, upto=5) == 5
    con = backend.open()
    con.execute("INSERT INTO history_counters (name, value) VALUES ('probe', 7)")
    con.close()
    store = DatabaseJobStates(backend)
    store.add(Job(id="j", kind="analyze", target="t"))
    assert schema_version(backend) == MIGRATIONS[-1].version >= 6
    con = backend.open()
    assert con.execute("SELECT value FROM history_counters WHERE name = 'probe'").fetchone() == (7,)
    con.close()
    assert store.get("j") == Job(id="j", kind="analyze", target="t", created_at=store.get("j").created_at)  # type: ignore[union-attr]


def test_reading_an_empty_sqlite_store_creates_no_file(tmp_path: Path) -> None:
    store = DatabaseJobStates(SQLiteBackend(tmp_path / "none.db"))
    assert (store.get("x"), store.jobs(), store.counts()) == (None, [], {})
    assert not (tmp_path / "none.db").exists()


# ---------------------------------------------------------------- real server processes


def _parquet(directory: Path) -> Path:
    path = directory / "events"
    path.mkdir(parents=True)
    ids = list(range(ROWS))
    table = pa.table(
        {"id": ids, "kind": [None if i % 7 == 0 else f"k{i % 5}" for i in ids], "v": [i % 97 for i in ids]}
    )
    pq.write_table(table, path / "part-0.parquet")
    return path


def _follow(get: Any, job_id: str, timeout: float = 240) -> tuple[dict[str, Any], Counter[int]]:
    """Polls ``GET /jobs/{id}`` until the job ends; the last answer and every status code seen."""
    codes: Counter[int] = Counter()
    deadline = time.monotonic() + timeout
    while True:
        response = get(f"/jobs/{job_id}")
        codes[response.status_code] += 1
        if response.status_code == 200 and response.json()["state"] in ("succeeded", "failed"):
            return response.json(), codes
        assert time.monotonic() < deadline, f"job {job_id} did not finish: {codes}"
        time.sleep(0.25)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_services_on_one_postgresql_database_follow_each_other_s_analyze_job(
    clean_env: dict[str, str], tmp_path: Path, postgres: PostgresServer
) -> None:
    shared = tmp_path / "shared"
    source = _parquet(shared / "data")
    env = {**clean_env, "PUSHDOWN_DATABASE_URL": postgres.new_database(), "PUSHDOWN_DATA_DIR": str(shared)}
    ports = free_port(), free_port()
    with (
        serving(["--port", str(ports[0])], env, tmp_path, ports[0]) as (first, _, _),
        serving(["--port", str(ports[1])], env, tmp_path, ports[1]) as (second, _, _),
    ):
        accepted = first.post("/tables/events/analyze", json={"path": str(source)})
        assert accepted.status_code == 202, accepted.text
        job_id = accepted.json()["job_id"]
        queued_or_running = second.get(f"/jobs/{job_id}")
        assert queued_or_running.status_code == 200, queued_or_running.text
        assert queued_or_running.json()["target"] == "events"
        done, codes = _follow(second.get, job_id)
        assert set(codes) == {200}
        assert done["state"] == "succeeded", done["error"]
        assert done["rows_seen"] == ROWS and done["result"]["row_count"] == ROWS and done["percent"] == 100.0
        assert first.get(f"/jobs/{job_id}").json() == done  # both read the one record
        assert [t["name"] for t in second.get("/tables").json()["tables"]] == ["events"]
        metrics = second.get("/metrics").text
        assert 'pushdown_analyze_jobs{state="succeeded"} 1.0' in metrics


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_worker_answers_for_a_job_on_the_default_sqlite_database(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    source = _parquet(data / "tables")
    env = {**clean_env, "PUSHDOWN_DATA_DIR": str(data)}
    port = free_port()
    with serving(["--port", str(port), "--workers", "2"], env, tmp_path, port) as (http, lines, _):
        accepted = http.post("/tables/events/analyze", json={"path": str(source)})
        assert accepted.status_code == 202, accepted.text

        def fresh_connection(path: str) -> httpx.Response:
            """A new connection per request, so the kernel hands it to either worker."""
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                return client.get(path)

        done, codes = _follow(fresh_connection, accepted.json()["job_id"])
        for _ in range(20):  # and after it finished, from either worker
            codes[fresh_connection(f"/jobs/{done['id']}").status_code] += 1
        assert set(codes) == {200}, codes
        assert sum(codes.values()) >= 21
        assert done["state"] == "succeeded", done["error"]
    # Both workers answered for the job (the access log says which process served each request).
    records = [json.loads(line) for line in lines if line.startswith("{")]
    served = {r["pid"] for r in records if r["logger"] == "pushdown.access" and r.get("route") == "/jobs/{job_id}"}
    assert len(served) == 2, served
