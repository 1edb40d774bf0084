"""The recorder's queue, bounded by the bytes its records hold rather than by their number.

A count bound lets a burst of large answers take gigabytes (one record can be a thousand times another); a
byte bound is what memory is.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections import deque
from dataclasses import dataclass

from service.history.record import Record


@dataclass(slots=True)
class QueuedRecord:
    """A record waiting for the writer; ``future`` (commit mode) learns whether it was committed."""

    record: Record
    size: int
    future: concurrent.futures.Future[bool] | None = None


class ByteQueue:
    """FIFO of items whose sizes add up to at most ``limit`` bytes; ``put`` refuses what does not fit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.bytes = 0
        self._items: deque[QueuedRecord] = deque()
        self._ready = threading.Condition()
        self._woken = False

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: QueuedRecord) -> bool:
        with self._ready:
            if self.bytes + item.size > self.limit:
                return False
            self._items.append(item)
            self.bytes += item.size
            self._ready.notify()
            return True

    def take(self, most: int, timeout: float) -> list[QueuedRecord]:
        """Up to ``most`` items, waiting up to ``timeout`` for the first (less when ``wake`` is called)."""
        with self._ready:
            if not self._items and not self._woken:
                self._ready.wait(timeout)
            self._woken = False
            batch = [self._items.popleft() for _ in range(min(most, len(self._items)))]
            self.bytes -= sum(item.size for item in batch)
            return batch

    def wake(self) -> None:
        with self._ready:
            self._woken = True
            self._ready.notify_all()
