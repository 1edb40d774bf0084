"""The recorder's queue holds at most its limit in bytes, however many records that is."""

from __future__ import annotations

from service.history.byte_queue import ByteQueue, QueuedRecord
from service.history.record import build_record


def item(body_bytes: int) -> QueuedRecord:
    record = build_record({"sql": "x" * body_bytes}, {"request_id": "r"})
    return QueuedRecord(record, record.size)


def test_records_beyond_the_byte_limit_are_refused_and_taking_frees_room() -> None:
    small, large = item(100), item(5000)
    queue = ByteQueue(limit=large.size + 2 * small.size)
    assert queue.put(large) and queue.put(small) and queue.put(small)
    assert not queue.put(small)  # full by bytes with three records
    assert queue.bytes == queue.limit
    assert queue.take(1, timeout=0) == [large]
    assert queue.bytes == 2 * small.size
    assert queue.put(item(4000))  # the room the large one left


def test_one_record_larger_than_the_limit_is_refused_even_when_empty() -> None:
    queue = ByteQueue(limit=1000)
    assert not queue.put(item(2000)) and queue.bytes == 0 and len(queue) == 0


def test_many_small_records_count_their_row_overhead() -> None:
    queue = ByteQueue(limit=10_000)
    accepted = 0
    while queue.put(item(0)):
        accepted += 1
    assert 0 < accepted < 10_000 // 256 + 1  # not free: each costs at least the row overhead
