"""Restart the service (a real process, stopped with SIGTERM) and the history is still there: SQLite and PostgreSQL."""

from __future__ import annotations

import os
from pathlib import Path

from tests.history.processes import service
from tests.history.requests import MIX, request


def restart_keeps_history(env: dict[str, str]) -> None:
    # Queue mode: answers leave before their records are written, so the SIGTERM must flush the queue.
    with service({**env, "PUSHDOWN_HISTORY_DURABILITY": "queue"}) as http:
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
