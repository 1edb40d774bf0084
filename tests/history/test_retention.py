"""Retention: records older than the age limit go, then the oldest beyond the size limit; the writer enforces it
on its own; bodies are stored compressed. SQLite and PostgreSQL."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from service.history import Filters, HistoryRecorder, HistoryStore, Record, Retention
from tests.history.conftest import NOW, seed


def stored_sizes(store: HistoryStore) -> list[tuple[str, int]]:
    """(id, stored bytes), newest first."""
    rows = store._query("SELECT id, stored_bytes FROM optimizations ORDER BY created_at DESC, id DESC")  # noqa: SLF001
    return [(str(i), int(n)) for i, n in rows]


def test_records_past_the_age_limit_are_deleted_with_their_tallies(store_url: str, seed_records: list[Record]) -> None:
    store = HistoryStore.from_url(store_url)
    seed(store, seed_records)
    young = {r.id for r in seed_records if r.created_at >= NOW - timedelta(days=3)}
    assert 0 < len(young) < len(seed_records)
    expired = store.enforce_retention(timedelta(days=3), None, now=NOW)
    assert expired == len(seed_records) - len(young)
    items, total = store.list(Filters(), limit=500)
    assert {i["id"] for i in items} == young and total == len(young)
    orphans = store._query(  # noqa: SLF001
        "SELECT COUNT(*) FROM optimization_tallies t WHERE NOT EXISTS "
        "(SELECT 1 FROM optimizations o WHERE o.id = t.optimization_id)"
    )
    assert orphans[0][0] == 0
    assert store.counters()["expired"] == expired
    assert store.enforce_retention(timedelta(days=3), None, now=NOW) == 0  # nothing more to do


def test_the_oldest_records_beyond_the_size_limit_are_deleted(store_url: str, seed_records: list[Record]) -> None:
    store = HistoryStore.from_url(store_url)
    seed(store, seed_records)
    sizes = stored_sizes(store)
    limit = sum(n for _, n in sizes[:7]) + sizes[7][1] // 2  # room for the 7 newest, not for the 8th
    assert store.enforce_retention(None, limit) == len(sizes) - 7
    assert [i for i, _ in stored_sizes(store)] == [i for i, _ in sizes[:7]]
    counters = store.counters()
    assert counters["stored_bytes"] <= limit and counters["kept"] == 7
    assert counters["expired"] == len(sizes) - 7


def test_bodies_are_stored_compressed_and_read_back_as_sent(store_url: str, seed_records: list[Record]) -> None:
    store = HistoryStore.from_url(store_url)
    seed(store, seed_records)
    sent = sum(len(r.request_json) + len(r.response_json) for r in seed_records)
    assert store.counters()["stored_bytes"] < sent / 2  # with the row overhead included
    record = seed_records[0]
    got = store.get(record.id)
    assert got is not None and got["response"]["request_id"] == record.id
    assert got["request"]["context"]["pipeline"] == record.pipeline


def test_the_writer_enforces_retention_on_its_own(store_url: str, seed_records: list[Record]) -> None:
    store = HistoryStore.from_url(store_url)
    seed(store, seed_records)  # all before NOW, days before the real clock's today
    assert datetime.now(UTC) - max(r.created_at for r in seed_records) > timedelta(days=1)
    recorder = HistoryRecorder(store, retention=Retention(max_age=timedelta(days=1), max_bytes=None, interval_s=0.1))
    recorder.start()  # no record submitted: the writer runs retention all the same
    try:
        deadline = time.monotonic() + 20
        while store.list(Filters())[1] > 0:
            assert time.monotonic() < deadline, "retention never ran"
            time.sleep(0.05)
        status = recorder.status(totals=True)
        assert status["retention"]["last_run_at"] is not None and status["retention"]["max_age_days"] == 1
        assert status["totals"]["expired"] == len(seed_records)
    finally:
        recorder.close()
