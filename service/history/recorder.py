"""Recording each answer: a queue bounded in bytes, one writer thread, and what the answer says about it.

Durability (``PUSHDOWN_HISTORY_DURABILITY``, see docs/decisions/0002-history-durability.md):

- ``commit`` (default): the route waits for the transaction that holds its record (the writer commits whatever
  is queued in one transaction, so concurrent requests share commits), then answers ``Pushdown-History:
  recorded``. A record that cannot be committed within ``history_commit_timeout_s``, or is dropped or fails,
  answers ``not-recorded``. An answer that says ``recorded`` is in the database before it leaves.
- ``queue``: the route answers at once with ``Pushdown-History: queued``; the record is written a moment later
  and is lost if the process dies first.

Losses (``dropped``: the queue's byte limit was reached; ``failed``: the store refused the batch;
``timed_out``: the answer left saying ``not-recorded`` while its record still waited) are logged, counted here
since the process started, and added to the database's ``history_counters`` by the writer, so they stay
visible after a restart (``status()``). The writer also enforces the retention limits now and then.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from service.history.byte_queue import ByteQueue, QueuedRecord
from service.history.record import build_record, request_dict
from service.history.store import HistoryStore
from service.settings import Settings

logger = logging.getLogger(__name__)

#: The response header that says what became of the answer's record.
HEADER = "Pushdown-History"


class Durability(StrEnum):
    COMMIT = "commit"
    QUEUE = "queue"


class Outcome(StrEnum):
    """The ``Pushdown-History`` header's values."""

    RECORDED = "recorded"  # committed before the answer left
    QUEUED = "queued"  # queue mode: on its way, lost if the process dies first
    NOT_RECORDED = "not-recorded"  # dropped, failed or not committed in time: the history may lack it
    OFF = "off"  # recording is disabled


@dataclass(frozen=True, slots=True)
class Retention:
    """What the history keeps: records younger than ``max_age`` and at most ``max_bytes`` stored (None: no limit),
    checked every ``interval_s`` by the writer."""

    max_age: timedelta | None = timedelta(days=90)
    max_bytes: int | None = 1024**3
    interval_s: float = 600.0

    @classmethod
    def from_settings(cls, settings: Settings) -> Retention:
        days, size = settings.history_retention_days, settings.history_max_bytes
        return cls(
            max_age=timedelta(days=days) if days > 0 else None,
            max_bytes=size if size > 0 else None,
            interval_s=settings.history_retention_interval_s,
        )


@dataclass
class _Counters:
    submitted: int = 0
    recorded: int = 0
    failed: int = 0
    dropped: int = 0
    timed_out: int = 0
    last_error: str | None = None
    last_error_at: str | None = None
    #: Losses not yet added to the database's counters.
    unsaved: Counter[str] = field(default_factory=Counter)


class HistoryRecorder:
    """Hands answers to a writer thread; ``submit`` never blocks and never raises."""

    def __init__(
        self,
        store: HistoryStore | None,
        *,
        durability: Durability | str = Durability.COMMIT,
        queue_bytes: int = 64 * 1024**2,
        batch_size: int = 200,
        linger: float = 0.05,
        commit_timeout: float = 5.0,
        retention: Retention | None = None,
    ) -> None:
        """``linger``: in queue mode, how long the writer waits for more answers before writing a batch (fewer
        transactions). In commit mode it never waits: answers queued while one batch is written form the next."""
        self.store = store
        self.durability = Durability(durability)
        self.batch_size = batch_size
        self.linger = linger if self.durability is Durability.QUEUE else 0.0
        self.commit_timeout = commit_timeout
        self.retention = retention
        self._queue = ByteQueue(queue_bytes)
        self._counters = _Counters()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._stopping = False
        self._retention_due = time.monotonic()
        self._retention_ran_at: str | None = None

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
        return cls(
            store,
            durability=settings.history_durability,
            queue_bytes=settings.history_queue_bytes,
            commit_timeout=settings.history_commit_timeout_s,
            retention=Retention.from_settings(settings),
        )

    @property
    def enabled(self) -> bool:
        return self.store is not None and not self._closed

    # ------------------------------------------------------------ the request side

    async def record(
        self,
        request: Any,
        response: dict[str, Any],
        response_json: bytes | str | None = None,
        duration_ms: float | None = None,
        request_json: bytes | str | None = None,
    ) -> Outcome:
        """Record one answer; in commit mode, wait (without blocking the event loop) for its commit."""
        ticket = self.submit(request, response, response_json, duration_ms, request_json)
        if not isinstance(ticket, concurrent.futures.Future):
            return ticket
        try:
            committed = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(ticket)), self.commit_timeout)
        except TimeoutError:
            self._count_loss("timed_out", 1, f"not committed within {self.commit_timeout:g} s")
            return Outcome.NOT_RECORDED
        return Outcome.RECORDED if committed else Outcome.NOT_RECORDED

    def submit(
        self,
        request: Any,
        response: dict[str, Any],
        response_json: bytes | str | None = None,
        duration_ms: float | None = None,
        request_json: bytes | str | None = None,
    ) -> Outcome | concurrent.futures.Future[bool]:
        """Queue one answer for the writer: in commit mode a future that says whether it was committed.

        ``request``: the validated request (``OptimizeInput`` or a dict); ``request_json`` and ``response_json``:
        the bodies as received and sent, stored as they are (serialized again only when not given).
        """
        if not self.enabled:
            return Outcome.OFF
        try:
            self._ensure_thread()
            with self._lock:
                self._counters.submitted += 1
            record = build_record(
                request_dict(request),
                response,
                request_json=_decoded(request_json),
                response_json=_decoded(response_json),
                duration_ms=duration_ms,
            )
            future: concurrent.futures.Future[bool] | None = None
            if self.durability is Durability.COMMIT:
                future = concurrent.futures.Future()
            if not self._queue.put(QueuedRecord(record, record.size, future)):
                self._count_loss("dropped", 1, f"queue full ({self._queue.limit} bytes)")
                return Outcome.NOT_RECORDED
        except Exception as exc:  # recording must never fail an optimization
            self._count_loss("failed", 1, repr(exc))
            return Outcome.NOT_RECORDED
        return future if future is not None else Outcome.QUEUED

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start the writer now (it also starts with the first record), so retention runs without traffic."""
        if self.enabled:
            self._ensure_thread()

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
        """Write what is queued and the counters (up to ``timeout``), then stop the writer."""
        if self._closed:
            return
        deadline = time.monotonic() + timeout
        self.flush(timeout)
        self._closed = True
        self._stopping = True
        self._queue.wake()
        thread = self._thread
        if thread is not None:
            thread.join(max(0.0, deadline - time.monotonic()))
        if self.store is not None:
            try:
                self.store.close()
            except Exception as exc:
                logger.warning("optimization history: closing the store failed: %r", exc)

    def status(self, *, totals: bool = False) -> dict[str, Any]:
        """Counters since this process started, from memory (cheap: metrics read it on every request); with
        ``totals``, also the counters since the history began, read from the database."""
        with self._lock:
            c = self._counters
            since_start = {
                "submitted": c.submitted,
                "recorded": c.recorded,
                "failed": c.failed,
                "dropped": c.dropped,
                "timed_out": c.timed_out,
                "last_error": c.last_error,
                "last_error_at": c.last_error_at,
            }
            unsaved = dict(c.unsaved)
        retention = self.retention
        return {
            "enabled": self.enabled,
            "backend": self.store.backend if self.store is not None else None,
            "durability": str(self.durability),
            "queued": len(self._queue),
            "queued_bytes": self._queue.bytes,
            "queue_bytes_limit": self._queue.limit,
            **since_start,
            **({"totals": self._totals(unsaved)} if totals else {}),
            "retention": None
            if retention is None
            else {
                "max_age_days": None if retention.max_age is None else retention.max_age / timedelta(days=1),
                "max_bytes": retention.max_bytes,
                "last_run_at": self._retention_ran_at,
            },
        }

    def _totals(self, unsaved: dict[str, int]) -> dict[str, int] | None:
        """The database's counters plus the losses not yet saved there; None when it cannot be read."""
        if self.store is None:
            return None
        try:
            totals = self.store.counters()
        except Exception as exc:
            logger.warning("optimization history: reading the counters failed: %r", exc)
            return None
        for name, n in unsaved.items():
            totals[name] += n
        return totals

    # ------------------------------------------------------------ the writer thread

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
            batch = self._queue.take(self.batch_size, timeout=self._idle_wait())
            if batch and self.linger > 0:  # let a batch gather: one transaction and one wake-up for many answers
                time.sleep(self.linger)
                batch += self._queue.take(self.batch_size - len(batch), timeout=0)
            if batch:
                self._write(batch)
            elif self._counters.unsaved:
                self._save_losses()
            if self.retention is not None and time.monotonic() >= self._retention_due:
                self._enforce_retention()
            if self._stopping and not len(self._queue):
                if self._counters.unsaved:
                    self._save_losses()
                return

    def _idle_wait(self) -> float:
        """How long the writer may sleep: until the next retention run, shorter while losses wait to be saved."""
        if self._counters.unsaved:
            return 1.0
        return max(0.05, self._retention_due - time.monotonic()) if self.retention is not None else 60.0

    def _unsaved(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counters.unsaved)

    def _mark_saved(self, saved: dict[str, int]) -> None:
        with self._lock:
            self._counters.unsaved.subtract(saved)
            self._counters.unsaved = +self._counters.unsaved  # drop the zeros

    def _write(self, batch: list[QueuedRecord]) -> None:
        assert self.store is not None
        losses = self._unsaved()
        try:
            self.store.add_many([item.record for item in batch], losses)
        except Exception as exc:
            self._count_loss("failed", len(batch), repr(exc))
            _resolve(batch, False)
            return
        self._mark_saved(losses)
        with self._lock:
            self._counters.recorded += len(batch)
            self._lock.notify_all()
        _resolve(batch, True)

    def _save_losses(self) -> None:
        assert self.store is not None
        losses = self._unsaved()
        try:
            self.store.add_counts(losses)
        except Exception as exc:  # the database is down: they stay in memory and go with the next write
            logger.debug("optimization history: saving the counters failed: %r", exc)
            return
        self._mark_saved(losses)

    def _enforce_retention(self) -> None:
        assert self.store is not None and self.retention is not None
        self._retention_due = time.monotonic() + self.retention.interval_s
        try:
            expired = self.store.enforce_retention(self.retention.max_age, self.retention.max_bytes)
        except Exception as exc:
            logger.warning("optimization history: retention failed: %r", exc)
            return
        self._retention_ran_at = datetime.now(UTC).isoformat(timespec="seconds")
        if expired:
            logger.info("optimization history: retention removed %d record(s)", expired)

    def _count_loss(self, kind: str, n: int, error: str) -> None:
        with self._lock:
            setattr(self._counters, kind, getattr(self._counters, kind) + n)
            self._counters.unsaved[kind] += n
            self._counters.last_error = error
            self._counters.last_error_at = datetime.now(UTC).isoformat(timespec="seconds")
            c = self._counters
            total = c.failed + c.dropped + c.timed_out
            self._lock.notify_all()
        self._queue.wake()  # the writer saves the counters
        # One line per loss would flood the log while the store is down: log the first and then every 100th.
        if total <= n or total // 100 != (total - n) // 100:
            logger.error("optimization history: %d record(s) %s (%d lost in all): %s", n, kind, total, error)


def _resolve(batch: list[QueuedRecord], committed: bool) -> None:
    for item in batch:
        if item.future is not None:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                item.future.set_result(committed)


def _decoded(text: bytes | str | None) -> str | None:
    return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
