"""Restart the service (a real process, stopped with SIGTERM) and the history is still there: SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.history.requests import MIX, request
from tests.serving import free_port, wait_for_health

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def service(env: dict[str, str]) -> Iterator[httpx.Client]:
    """``uvicorn --factory api.app:create_app`` in its own process; SIGTERM at the end, as a supervisor would."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "api.app:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        base_url = f"http://127.0.0.1:{port}"
        wait_for_health(base_url, proc, 30, output=lambda: proc.communicate()[0])
        with httpx.Client(base_url=base_url, timeout=30) as http:
            yield http
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            output = proc.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            proc.kill()
            output = proc.communicate()[0]
        # uvicorn shuts down gracefully (lifespan included), then re-raises the signal it caught.
        assert proc.returncode in (0, -signal.SIGTERM), output


def restart_keeps_history(env: dict[str, str]) -> None:
    with service(env) as http:
        ids = []
        for kind, pipeline, task in MIX:
            answer = http.post("/optimize", json=request(kind, pipeline, task, "before-restart"))
            assert answer.status_code == 200, answer.text
            ids.append(answer.json()["request_id"])
        # No waiting for the writer here: the SIGTERM below must flush what is still queued.
    with service(env) as http:
        page = http.get("/api/optimizations", params={"limit": 100}).json()
        assert page["total"] == len(ids)
        assert {item["id"] for item in page["items"]} == set(ids)
        full = http.get(f"/api/optimizations/{ids[0]}").json()
        assert full["response"]["request_id"] == ids[0] and full["request"]["context"]["run"] == "before-restart"
        assert http.post("/optimize", json=request("join", "after")).status_code == 200
    with service(env) as http:
        assert http.get("/api/savings").json()["totals"]["requests"] == len(ids) + 1


def test_sqlite_history_survives_a_restart(clean_env: dict[str, str], tmp_path: Path) -> None:
    env = {**clean_env, "PUSHDOWN_DATA_DIR": str(tmp_path / "data")}
    restart_keeps_history(env)
    assert (tmp_path / "data" / "pushdown.db").exists()


def test_postgres_history_survives_a_restart(clean_env: dict[str, str], postgres: object) -> None:
    url = postgres.new_database()  # type: ignore[attr-defined]
    restart_keeps_history({**clean_env, "PUSHDOWN_DATABASE_URL": url, "PUSHDOWN_DATA_DIR": os.devnull + "-unused"})
