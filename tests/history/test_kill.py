"""SIGKILL during load loses no acknowledged record: every answer that said ``Pushdown-History: recorded`` is in
the history after the kill, on SQLite and on PostgreSQL (a real server process, real databases)."""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.history import HistoryStore
from tests.history.processes import ServiceProcess, service, start_service
from tests.history.requests import MIX, request

CLIENTS = 8


def load_then_kill(running: ServiceProcess, answers: int, most_s: float = 30) -> list[tuple[str, str]]:
    """``CLIENTS`` threads post the MIX until the service is SIGKILLed, once ``answers`` answers arrived (or
    ``most_s`` passed); (request id, header) of every answer that arrived."""
    answered: list[tuple[str, str]] = []
    lock = threading.Lock()

    def client(slot: int) -> None:
        with httpx.Client(base_url=running.base_url, timeout=30) as http:
            i = slot
            while True:
                kind, pipeline, task = MIX[i % len(MIX)]
                try:
                    answer = http.post("/optimize", json=request(kind, pipeline, task, f"load-{slot}"))
                except httpx.TransportError:
                    return  # the service is gone
                assert answer.status_code == 200, answer.text
                with lock:
                    answered.append((answer.json()["request_id"], answer.headers["Pushdown-History"]))
                i += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + most_s
    while len(answered) < answers and time.monotonic() < deadline:
        time.sleep(0.01)
    running.stop(signal.SIGKILL)
    for t in threads:
        t.join(30)
    return answered


def kept_ids(url: str, ids: list[str]) -> set[str]:
    store = HistoryStore.from_url(url)
    try:
        return {i for i in ids if store.get(i) is not None}
    finally:
        store.close()


def kill_under_load(env: dict[str, str], url: str, durability: str) -> tuple[Counter[str], int]:
    """How the answers were marked, and how many that said ``recorded`` are missing after the kill."""
    running = start_service({**env, "PUSHDOWN_HISTORY_DURABILITY": durability})
    answered = load_then_kill(running, answers=150)
    said = Counter(header for _, header in answered)
    assert len(answered) >= 150, said  # enough load for the kill to land among requests in flight
    recorded = [i for i, header in answered if header == "recorded"]
    missing = len(recorded) - len(kept_ids(url, recorded))
    all_ids = [i for i, _ in answered]
    print(
        f"{durability}: {len(answered)} answered {dict(said)}; missing after SIGKILL: {missing} said recorded, "
        f"{len(all_ids) - len(kept_ids(url, all_ids))} of all answers"
    )
    return said, missing


def sqlite_env(clean_env: dict[str, str], tmp_path: Path) -> tuple[dict[str, str], str]:
    data = tmp_path / "data"
    return {**clean_env, "PUSHDOWN_DATA_DIR": str(data)}, f"sqlite:///{(data / 'pushdown.db').as_posix()}"


def postgres_env(clean_env: dict[str, str], postgres: Any, tmp_path: Path) -> tuple[dict[str, str], str]:
    url = postgres.new_database()
    return {**clean_env, "PUSHDOWN_DATABASE_URL": url, "PUSHDOWN_DATA_DIR": str(tmp_path / "data")}, url


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
def test_sigkill_under_load_loses_no_answer_that_said_recorded(
    database: str, clean_env: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env, url = (
        sqlite_env(clean_env, tmp_path)
        if database == "sqlite"
        else postgres_env(clean_env, request.getfixturevalue("postgres"), tmp_path)
    )
    said, missing = kill_under_load(env, url, "commit")
    assert said["recorded"] > 100 and set(said) <= {"recorded", "not-recorded"}
    assert missing == 0


def test_in_queue_mode_no_answer_claims_to_be_recorded(clean_env: dict[str, str], tmp_path: Path) -> None:
    """The other option: answers leave at once and say ``queued``, so what a kill loses was never acknowledged."""
    env, url = sqlite_env(clean_env, tmp_path)
    said, missing = kill_under_load(env, url, "queue")
    assert set(said) == {"queued"} and missing == 0


def test_loss_counters_survive_a_kill_and_a_restart(clean_env: dict[str, str], tmp_path: Path) -> None:
    """Every record is larger than the queue's byte limit: dropped, said so, counted in the database."""
    env, url = sqlite_env(clean_env, tmp_path)
    env["PUSHDOWN_HISTORY_QUEUE_BYTES"] = "100"
    running = start_service(env)
    with httpx.Client(base_url=running.base_url, timeout=30) as http:
        for kind, pipeline, task in MIX[:3]:
            answer = http.post("/optimize", json=request(kind, pipeline, task))
            assert answer.headers["Pushdown-History"] == "not-recorded"
        status = http.get("/api/history/status").json()
        assert status["dropped"] == 3 and status["queue_bytes_limit"] == 100
    deadline = time.monotonic() + 10  # the writer saves counted losses at once: wait for the database to say so
    while HistoryStore.from_url(url).counters()["dropped"] < 3:
        assert time.monotonic() < deadline, "the drops never reached the database"
        time.sleep(0.05)
    running.stop(signal.SIGKILL)
    with service({**env, "PUSHDOWN_HISTORY_QUEUE_BYTES": str(10**7)}) as http:
        assert http.post("/optimize", json=request("join", "p")).headers["Pushdown-History"] == "recorded"
        status = http.get("/api/history/status").json()
    assert status["dropped"] == 0 and status["recorded"] == 1  # this process
    assert status["totals"]["dropped"] == 3 and status["totals"]["recorded"] == 1  # since the history began
