"""SIGTERM within a bounded time: in-flight requests get ``shutdown_grace_s`` to finish, then the process goes.

uvicorn's own SIGTERM handling stops accepting connections, waits for in-flight requests (without a limit
unless started with ``--timeout-graceful-shutdown``), then runs the lifespan's shutdown, which flushes the
history. This adds the limit however the app is served: when SIGTERM arrives, a timer starts. If requests
are still running ``shutdown_grace_s`` (and a second) later, the history is flushed (what committed is safe
already) and uvicorn is told to stop waiting (its ``force_exit``, as a second Ctrl+C would); if they are done
and the lifespan's shutdown is under way, it gets ``FLUSH_AFTER_GRACE_S`` more. Whatever still holds the
process after that is cut short (exit status 1). An answer that never left was never acknowledged, so nothing
acknowledged is lost.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import FrameType
from typing import Any

from fastapi import FastAPI

logger = logging.getLogger(__name__)

#: How long the history may take to flush once the grace period is over.
FLUSH_AFTER_GRACE_S = 5.0
#: ``pushdown serve`` passes the grace to uvicorn (``timeout_graceful_shutdown``), which then cancels the
#: requests and runs the lifespan's shutdown itself: give it this long to do so before stepping in.
SERVER_FIRST_S = 1.0


def install_graceful_shutdown(app: FastAPI, grace_s: float) -> None:
    """Arm the SIGTERM deadline when the app starts (in the server's main thread: tests that serve it from a
    thread of their own are left alone)."""
    previous: Callable[[Any], AbstractAsyncContextManager[Any]] = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app_: Any) -> AsyncIterator[Any]:
        deadline = ShutdownDeadline(grace_s, lambda: _flush_history(app))
        deadline.arm()
        async with previous(app_) as state:
            yield state
            deadline.stopping.set()  # requests are done; the lifespan's shutdown (history flush) starts now

    app.router.lifespan_context = lifespan


class ShutdownDeadline:
    """After SIGTERM: ``grace_s`` for requests in flight, ``FLUSH_AFTER_GRACE_S`` more for the shutdown itself."""

    def __init__(self, grace_s: float, before_exit: Callable[[], None]) -> None:
        self.grace_s = grace_s
        self.before_exit = before_exit
        self.stopping = threading.Event()
        self._started = threading.Event()
        self._server: Any = None

    def arm(self) -> bool:
        """Chain a handler after the server's SIGTERM handler; False when there is none to chain to (not the
        main thread, or SIGTERM still kills at once)."""
        if threading.current_thread() is not threading.main_thread():
            return False
        server_handler = signal.getsignal(signal.SIGTERM)
        if not callable(server_handler):
            return False
        self._server = getattr(server_handler, "__self__", None)  # uvicorn's Server: its handle_exit is bound

        def on_sigterm(sig: int, frame: FrameType | None) -> None:
            server_handler(sig, frame)
            if not self._started.is_set():
                self._started.set()
                _later(self.grace_s + SERVER_FIRST_S, self._grace_over)

        signal.signal(signal.SIGTERM, on_sigterm)
        return True

    def _grace_over(self) -> None:
        _later(FLUSH_AFTER_GRACE_S, self._shutdown_hung)
        if self.stopping.is_set():  # requests finished in time; the app is flushing and closing
            return
        logger.error(
            "shutdown: requests still running %g s after SIGTERM; flushing the history and exiting", self.grace_s
        )
        try:
            self.before_exit()
        except Exception as exc:
            logger.error("shutdown: flushing the history failed: %r", exc)
        if hasattr(self._server, "force_exit"):
            self._server.force_exit = True  # uvicorn stops waiting for the requests and finishes
        else:
            os._exit(1)

    def _shutdown_hung(self) -> None:
        logger.error("shutdown: not finished %g s after SIGTERM; exiting", self.grace_s + FLUSH_AFTER_GRACE_S)
        os._exit(1)


def _later(seconds: float, action: Callable[[], None]) -> None:
    timer = threading.Timer(seconds, action)
    timer.daemon = True
    timer.start()


def _flush_history(app: FastAPI) -> None:
    history = getattr(app.state, "history", None)
    if history is not None:
        history.close(FLUSH_AFTER_GRACE_S)
