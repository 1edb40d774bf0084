"""Bounded work per request: a time limit that really stops the work, and a cap on work running at once.

Each request's CPU work runs on a thread of its own, off the event loop (so ``/healthz`` keeps answering),
with the request's deadline in ``costmodel.deadline``'s context variable for loops that check it. A thread
still running when the deadline has passed (plus a short grace for those checks) gets ``DeadlineExceeded``
raised inside it asynchronously, which stops any Python code at its next bytecode; the caller is answered
at once either way. Threads are daemons, so a stuck one never holds up the process's exit, and a slot is
given back only when its thread has really finished: runaway work cannot pile up beyond the cap.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ctypes
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from costmodel.deadline import DeadlineExceeded, deadline_scope

logger = logging.getLogger(__name__)

T = TypeVar("T")
#: After the deadline, how long loops get to notice it themselves before the thread is interrupted.
COOPERATIVE_GRACE_S = 0.25


def _raise_in_thread(ident: int) -> bool:
    """Make thread ``ident`` raise ``DeadlineExceeded`` at its next bytecode; False if there is no such thread."""
    done = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(DeadlineExceeded))
    return bool(done == 1)


class _Work:
    """One call on its own daemon thread, reporting its outcome to an asyncio future."""

    def __init__(self, fn: Callable[[], Any], deadline: float, loop: asyncio.AbstractEventLoop) -> None:
        self._fn = fn
        self._deadline = deadline
        self._loop = loop
        self._context = contextvars.copy_context()
        self._lock = threading.Lock()
        self._ident: int | None = None
        self._done = False
        self._interrupted = False
        self.future: asyncio.Future[Any] = loop.create_future()
        # Read the outcome even when nobody awaits it any more (the request was answered 503 at the limit),
        # so asyncio does not log the stopped work's traceback as an error never retrieved.
        self.future.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.finished: asyncio.Future[None] = loop.create_future()

    def start(self) -> None:
        threading.Thread(target=self._main, name="pushdown-work", daemon=True).start()

    def interrupt(self) -> None:
        """Stop the work if it still runs; at most once."""
        with self._lock:
            if self._done or self._interrupted or self._ident is None:
                return
            self._interrupted = True
            _raise_in_thread(self._ident)

    def _call(self) -> Any:
        with deadline_scope(None, at=self._deadline):
            return self._fn()

    def _main(self) -> None:
        self._ident = threading.get_ident()
        outcome: tuple[Any, BaseException | None] = (None, DeadlineExceeded())
        try:
            try:
                outcome = (self._context.run(self._call), None)
            except BaseException as exc:  # handed to the awaiting request, raised there
                outcome = (None, exc)
            with self._lock:
                self._done = True
        except DeadlineExceeded:  # an interrupt that landed after the work itself had finished
            pass
        with contextlib.suppress(RuntimeError):  # the event loop is closed: the service is gone
            self._loop.call_soon_threadsafe(self._settle, *outcome)

    def _settle(self, result: Any, error: BaseException | None) -> None:
        if not self.future.done():
            if error is None:
                self.future.set_result(result)
            else:
                self.future.set_exception(error)
        self.finished.set_result(None)


class BoundedRunner:
    """Runs request work within ``limit_s`` (per request), at most ``max_concurrent`` at a time."""

    def __init__(self, limit_s: float, max_concurrent: int) -> None:
        self.limit_s = limit_s
        self.max_concurrent = max_concurrent
        self._slots: asyncio.Semaphore | None = None
        self.interrupted = 0

    def deadline(self) -> float:
        """The deadline of a request starting now (monotonic clock)."""
        return time.monotonic() + self.limit_s

    async def run(self, fn: Callable[..., T], *args: Any, deadline: float) -> T:
        """``fn(*args)`` off the event loop; ``DeadlineExceeded`` once ``deadline`` passes, the work stopped."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_concurrent)
        slots = self._slots
        try:
            await asyncio.wait_for(slots.acquire(), max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            raise DeadlineExceeded(self.limit_s) from None
        work = _Work(lambda: fn(*args), deadline, asyncio.get_running_loop())
        work.finished.add_done_callback(lambda _: slots.release())
        work.start()
        try:
            wait = max(0.0, deadline - time.monotonic()) + COOPERATIVE_GRACE_S
            return await asyncio.wait_for(asyncio.shield(work.future), wait)
        except TimeoutError:
            self.interrupted += 1
            work.interrupt()
            logger.warning("request work stopped at its time limit of %.1f s", self.limit_s)
            raise DeadlineExceeded(self.limit_s) from None
        except asyncio.CancelledError:  # the request itself was cancelled (shutdown): stop its work too
            work.interrupt()
            raise
        except DeadlineExceeded:
            raise DeadlineExceeded(self.limit_s) from None
