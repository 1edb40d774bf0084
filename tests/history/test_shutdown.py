"""SIGTERM: in-flight requests finish and are recorded within the grace period; past it the process exits anyway,
with the history flushed. A real server process and a real SQLite file."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from service.history import HistoryStore
from tests.history.processes import start_service
from tests.history.requests import request

SLOW_APP = "tests.history.slow_app:create_app"


def post_in_background(base_url: str, body: dict[str, Any]) -> tuple[threading.Thread, list[Any]]:
    """POST ``body`` from a thread; the list gets the response, or the transport error."""
    result: list[Any] = []

    def post() -> None:
        try:
            result.append(httpx.post(f"{base_url}/optimize", json=body, timeout=60))
        except httpx.TransportError as exc:
            result.append(exc)

    thread = threading.Thread(target=post)
    thread.start()
    return thread, result


def env_for(clean_env: dict[str, str], tmp_path: Path, **settings: str) -> tuple[dict[str, str], str]:
    data = tmp_path / "data"
    env = {**clean_env, "PUSHDOWN_DATA_DIR": str(data), **{f"PUSHDOWN_{k.upper()}": v for k, v in settings.items()}}
    return env, f"sqlite:///{(data / 'pushdown.db').as_posix()}"


def test_sigterm_lets_the_request_in_flight_finish_and_records_it(clean_env: dict[str, str], tmp_path: Path) -> None:
    env, url = env_for(clean_env, tmp_path, test_slow_s="2", shutdown_grace_s="20")
    running = start_service(env, SLOW_APP)
    thread, result = post_in_background(running.base_url, request("join", "p", "slow"))
    time.sleep(0.7)  # the request is in the engine now
    started = time.monotonic()
    output = running.stop(signal.SIGTERM)
    thread.join(30)
    assert running.proc.returncode in (0, -signal.SIGTERM), output
    assert time.monotonic() - started < 10
    (answer,) = result
    assert isinstance(answer, httpx.Response) and answer.status_code == 200, answer
    assert answer.headers["Pushdown-History"] == "recorded"
    assert HistoryStore.from_url(url).get(answer.json()["request_id"]) is not None


def test_past_the_grace_period_the_process_exits_and_flushes_the_history(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    """A request still computing when the grace period ends: the process exits anyway (said in the log);
    the answers given before are in the database (queue mode: written after they left)."""
    env, url = env_for(clean_env, tmp_path, test_slow_s="60", shutdown_grace_s="1.5", history_durability="queue")
    running = start_service(env, SLOW_APP)
    ids = []
    with httpx.Client(base_url=running.base_url, timeout=30) as http:
        for n in range(20):
            answer = http.post("/optimize", json=request("join", "p", f"quick-{n}"))
            assert answer.headers["Pushdown-History"] == "queued"
            ids.append(answer.json()["request_id"])
    thread, result = post_in_background(running.base_url, request("join", "p", "slow"))
    time.sleep(0.7)
    started = time.monotonic()
    output = running.stop(signal.SIGTERM)
    took = time.monotonic() - started
    thread.join(30)
    assert 1.4 < took < 1.5 + 1 + 5 + 3, output  # the grace, the server's turn, at most the flush, the exit
    assert running.proc.returncode in (-signal.SIGTERM, 1) and "flushing the history" in output
    assert isinstance(result[0], httpx.TransportError)  # the slow answer never left: nothing acknowledged
    store = HistoryStore.from_url(url)
    assert all(store.get(i) is not None for i in ids)
