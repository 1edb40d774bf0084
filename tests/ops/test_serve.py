"""``pushdown serve`` as an operator runs it: a real process, its .env, JSON logs, several workers, and two
services sharing one PostgreSQL database."""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import sqlglot
from prometheus_client.parser import text_string_to_metric_families

from bench.load import MAX_DESCRIPTORS_GROWN, held
from service import __version__
from service.database.pool import ConnectionPool
from service.statistics import StatisticsStore
from tests.postgres import PostgresServer, connections_to
from tests.service.test_cli import REQUEST, pushdown_command
from tests.serving import free_port, wait_for_health


@contextmanager
def serving(
    args: list[str], env: dict[str, str], cwd: Path, port: int
) -> Iterator[tuple[httpx.Client, list[str], subprocess.Popen[str]]]:
    """``pushdown serve ARGS`` until the block ends; yields a client, its stderr lines (filled in after the block)
    and the process. Its stderr goes to a file, not a pipe: a pipe nobody reads fills up after a few hundred
    access-log lines and the service then blocks on its next log write."""
    with tempfile.TemporaryFile("w+") as output:
        proc = subprocess.Popen(
            [*pushdown_command(), "serve", *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=output, text=True
        )

        def everything() -> str:
            output.seek(0)
            return output.read()

        lines: list[str] = []
        try:
            url = f"http://127.0.0.1:{port}"
            wait_for_health(url, proc, 60, output=everything)
            with httpx.Client(base_url=url, timeout=30) as http:
                yield http, lines, proc
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            lines += everything().splitlines()


def test_version(clean_env: dict[str, str], tmp_path: Path) -> None:
    result = subprocess.run(
        [*pushdown_command(), "--version"], capture_output=True, text=True, env=clean_env, cwd=tmp_path, timeout=60
    )
    # the engine and the service are pure Python; the base install brings sqlglot's compiled build (sqlglot[c])
    expected = f"pushdown {__version__} (sqlglot {sqlglot.__version__}, compiled)"
    assert (result.returncode, result.stdout.strip()) == (0, expected)


def test_serve_reads_dot_env_and_logs_json_lines_with_the_request_id(clean_env: dict[str, str], tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / ".env").write_text(f"PUSHDOWN_PORT={port}\nPUSHDOWN_API_TOKEN=from-dot-env\nPOSTGRES_PASSWORD=x\n")
    with serving([], clean_env, tmp_path, port) as (http, lines, _):
        assert http.post("/optimize", json=REQUEST).status_code == 401
        answer = http.post(
            "/optimize", json=REQUEST, headers={"Authorization": "Bearer from-dot-env", "X-Request-ID": "dotenv-1"}
        )
        assert answer.status_code == 200
    records = [json.loads(line) for line in lines if line.startswith("{")]
    assert records and len(records) == len([line for line in lines if line.strip()])  # every line is JSON
    (access,) = [r for r in records if r.get("request_id") == "dotenv-1" and r["logger"] == "pushdown.access"]
    assert (access["route"], access["status"]) == ("/optimize", 200)
    assert any(r["logger"].startswith("uvicorn") for r in records)  # uvicorn's own lines too


def _children(pid: int) -> list[int]:
    try:  # the process may end between the listing and the read
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


def test_several_workers_share_one_postgresql_database_and_their_metrics(
    clean_env: dict[str, str], tmp_path: Path, postgres: PostgresServer
) -> None:
    port = free_port()
    env = {
        **clean_env,
        "PUSHDOWN_DATABASE_URL": postgres.new_database(),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
    }
    with serving(["--workers", "2", "--port", str(port)], env, tmp_path, port) as (http, _, proc):
        workers = [pid for pid in _children(proc.pid) if "multiprocessing" in _cmdline(pid)]
        assert len(workers) >= 2, [_cmdline(pid) for pid in _children(proc.pid)]

        def optimize(_: int) -> str:
            with httpx.Client(base_url=str(http.base_url), timeout=30) as own:  # a connection each
                # computed afresh: each on a thread of its own, which reads feedback from the database
                response = own.post("/optimize", json=REQUEST, headers={"cache-control": "no-cache"})
                assert response.status_code == 200
                return str(response.json()["request_id"])

        with ThreadPoolExecutor(8) as pool:
            ids = set(pool.map(optimize, range(24)))
        assert len(ids) == 24
        samples = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(http.get("/metrics").text)
            for s in family.samples
        }
        key = (("method", "POST"), ("route", "/optimize"), ("status", "200"))
        assert samples[("pushdown_http_requests_total", key)] == 24  # every worker's count, whoever was scraped
        per_process = {p.name for p in (tmp_path / "metrics").glob("counter_*.db")}
        assert per_process, "the workers keep their values in the multiprocess directory"
        deadline = time.monotonic() + 20
        while True:  # each worker's history writer commits on its own schedule
            listed = http.get("/api/optimizations", params={"limit": 100}).json()
            found = {item["id"] for item in listed["items"]}
            if ids <= found or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert ids <= found
        # a connection per request thread was never closed: 24 requests held 24 more of max_connections
        held = connections_to(env["PUSHDOWN_DATABASE_URL"])
        assert held <= 2 * 2 * ConnectionPool.IDLE + 2, held  # per worker, the history's pool and the statistics'


def test_two_services_on_one_database_see_each_other_s_history_and_tables(
    clean_env: dict[str, str], tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.new_database()
    env = {**clean_env, "PUSHDOWN_DATABASE_URL": url, "PUSHDOWN_DATA_DIR": str(tmp_path / "shared")}
    store = StatisticsStore(None, tmp_path / "shared" / "samples", url)
    stats = {"columns": [{"name": "id", "type": "int"}, {"name": "v", "type": "int"}], "row_count": 1234}
    store.commit("orders", stats, store.stage_sample("orders", None))
    ports = free_port(), free_port()
    with (
        serving(["--port", str(ports[0])], env, tmp_path, ports[0]) as (first, _, _),
        serving(["--port", str(ports[1])], env, tmp_path, ports[1]) as (second, _, _),
    ):
        answer = first.post("/optimize", json={"sql": "SELECT id FROM orders WHERE v > 3"}).json()
        assert [(u["analyzed_table"], u["row_count"]) for u in answer["statistics"]] == [("orders", 1234)]
        assert [t["name"] for t in second.get("/tables").json()["tables"]] == ["orders"]
        deadline = time.monotonic() + 20
        while second.get(f"/api/optimizations/{answer['request_id']}").status_code != 200:
            assert time.monotonic() < deadline, "the first service's answer never reached the shared history"
            time.sleep(0.2)


def test_a_served_instance_holds_as_many_descriptors_after_hundreds_of_requests(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    """The default store (SQLite): each uncached request ran on a thread of its own and left that thread's
    database connection open, so the descriptors grew by two per request (the database and its WAL) until the
    process ran out."""
    port = free_port()
    env = {**clean_env, "PUSHDOWN_DATA_DIR": str(tmp_path / "data")}
    with serving(["--port", str(port)], env, tmp_path, port) as (http, _, proc):

        def optimize(_: int) -> int:
            with httpx.Client(base_url=str(http.base_url), timeout=30) as own:
                response = own.post("/optimize", json=REQUEST, headers={"cache-control": "no-cache"})
                return response.status_code

        with ThreadPoolExecutor(4) as pool:
            assert set(pool.map(optimize, range(20))) == {200}
            before = held(proc.pid)
            assert set(pool.map(optimize, range(300))) == {200}
        after = held(proc.pid)
    assert after["fds"] - before["fds"] <= MAX_DESCRIPTORS_GROWN, (before, after)
    assert after["threads"] <= before["threads"] + 4, (before, after)
