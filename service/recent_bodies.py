"""The last request bodies read, by their exact bytes: a pipeline sends the same bytes every run.

Reading a 10 kB body again (JSON, then validation) costs as much as answering it from the request cache, so a
repeat of the same bytes takes the body read before. Only ordinary bodies are kept (small, parsed where they
arrive), and only while the request cache is on: what they save is the cost of a hit.

    >>> bodies = RecentBodies(max_entries=1)
    >>> bodies.put(b'{"sql": "SELECT 1"}', "read")
    >>> bodies.get(b'{"sql": "SELECT 1"}'), bodies.get(b"{}")
    ('read', None)
    >>> bodies.put(b"{}", "other"); bodies.get(b'{"sql": "SELECT 1"}') is None
    True
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

T = TypeVar("T")


class RecentBodies(Generic[T]):
    """What each of the last ``max_entries`` bodies read to; a body over ``max_body_bytes`` is not kept."""

    def __init__(self, max_entries: int = 128, max_body_bytes: int = 64 * 1024) -> None:
        self.max_entries = max_entries
        self.max_body_bytes = max_body_bytes
        self._read: OrderedDict[bytes, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, raw: bytes) -> T | None:
        with self._lock:
            value = self._read.get(raw)
            if value is not None:
                self._read.move_to_end(raw)
            return value

    def put(self, raw: bytes, value: T) -> None:
        if len(raw) > self.max_body_bytes or self.max_entries <= 0:
            return
        with self._lock:
            self._read[raw] = value
            self._read.move_to_end(raw)
            while len(self._read) > self.max_entries:
                self._read.popitem(last=False)
