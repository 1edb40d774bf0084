"""Recording off the request path: a bounded queue and one writer thread that writes records in batches.

A full queue drops the record, a failing store loses the batch; both are logged and counted (``status()``),
and neither slows nor fails an optimization.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from service.history.record import Record, build_record, request_dict
from service.history.store import HistoryStore
from service.settings import Settings

logger = logging.getLogger(__name__)


@dataclass
class _Counters:
    submitted: int = 0
    recorded: int = 0
    failed: int = 0
    dropped: int = 0
    last_error: str | None = None
    last_error_at: str | None = None


@dataclass
class _Item:
    request: Any
    response: dict[str, Any]
    response_json: bytes | str | None
    duration_ms: float | None
    request_json: bytes | str | None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))


def _decoded(text: bytes | str | None) -> str | None:
    return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text


class HistoryRecorder:
    """Hands answers to a writer thread through a bounded queue; ``record`` never blocks and never raises."""

    def __init__(
        self, store: HistoryStore | None, *, queue_size: int = 10_000, batch_size: int = 200, linger: float = 0.05
    ) -> None:
        """``linger``: how long the writer waits for more answers before writing a batch (fewer transactions)."""
        self.store = store
        self.batch_size = batch_size
        self.linger = linger
        self._queue: queue.Queue[_Item | None] = queue.Queue(maxsize=queue_size)
        self._counters = _Counters()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    @classmethod
    def from_settings(cls, settings: Settings) -> HistoryRecorder:
        """The recorder the settings ask for: disabled (no store) when recording is off or the URL is unsupported."""
        if not settings.history_enabled:
            return cls(None)
        try:
            store = HistoryStore.from_settings(settings)
        except ValueError as exc:
            logger.warning("optimization history disabled: %s", exc)
            return cls(None)
        return cls(store, queue_size=settings.history_queue_size)

    @property
    def enabled(self) -> bool:
        return self.store is not None and not self._closed

    def record(
        self,
        request: Any,
        response: dict[str, Any],
        response_json: bytes | str | None = None,
        duration_ms: float | None = None,
        request_json: bytes | str | None = None,
    ) -> None:
        """Queue one answer for the writer; drops it (logged, counted) when the queue is full.

        ``request``: the validated request (``OptimizeInput`` or a dict); ``request_json`` and ``response_json``:
        the bodies as received and sent, stored as they are (serialized again only when not given).
        """
        if not self.enabled:
            return
        try:
            self._ensure_thread()
            with self._lock:
                self._counters.submitted += 1
            self._queue.put_nowait(_Item(request, response, response_json, duration_ms, request_json))
        except queue.Full:
            self._count_loss("dropped", 1, "queue full")
        except Exception as exc:  # recording must never fail an optimization
            self._count_loss("failed", 1, repr(exc))

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far is written or counted as lost; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._settled() < self._counters.submitted:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued (up to ``timeout``) and stop the writer."""
        if self._closed:
            return
        self.flush(timeout)
        self._closed = True
        thread = self._thread
        if thread is not None:
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(None)
            thread.join(timeout)
        if self.store is not None:
            try:
                self.store.close()
            except Exception as exc:
                logger.warning("optimization history: closing the store failed: %r", exc)

    def status(self) -> dict[str, Any]:
        with self._lock:
            counters = dataclasses.asdict(self._counters)
        return {
            "enabled": self.enabled,
            "backend": self.store.backend if self.store is not None else None,
            "queued": self._queue.qsize(),
            **counters,
        }

    # ------------------------------------------------------------ writer

    def _settled(self) -> int:
        c = self._counters
        return c.recorded + c.failed + c.dropped

    def _ensure_thread(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="history-writer", daemon=True)
                    self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            if self.linger > 0:  # let a batch gather: one transaction and one wake-up for many answers
                time.sleep(self.linger)
            while len(batch) < self.batch_size:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._write(batch)
                    return
                batch.append(more)
            self._write(batch)

    def _write(self, batch: list[_Item]) -> None:
        assert self.store is not None
        try:
            records = [self._to_record(item) for item in batch]
            self.store.add_many(records)
        except Exception as exc:
            self._count_loss("failed", len(batch), repr(exc))
            return
        with self._lock:
            self._counters.recorded += len(batch)
            self._lock.notify_all()

    @staticmethod
    def _to_record(item: _Item) -> Record:
        return build_record(
            request_dict(item.request),
            item.response,
            request_json=_decoded(item.request_json),
            response_json=_decoded(item.response_json),
            duration_ms=item.duration_ms,
            created_at=item.created_at,
        )

    def _count_loss(self, kind: str, n: int, error: str) -> None:
        with self._lock:
            setattr(self._counters, kind, getattr(self._counters, kind) + n)
            self._counters.last_error = error
            self._counters.last_error_at = datetime.now(UTC).isoformat(timespec="seconds")
            total = self._counters.failed + self._counters.dropped
            self._lock.notify_all()
        # One line per loss would flood the log while the store is down: log the first and then every 100th.
        if total <= n or total // 100 != (total - n) // 100:
            logger.error("optimization history: %d record(s) %s (%d lost in all): %s", n, kind, total, error)
