"""SIGTERM within a bounded time: in-flight requests get ``shutdown_grace_s`` to finish, then the process goes.

uvicorn's own SIGTERM handling stops accepting connections, waits for in-flight requests (without a limit
unless started with ``--timeout-graceful-shutdown``), then runs the lifespan's shutdown, which flushes the
history. This adds the limit however the app is served: when SIGTERM arrives, a timer starts; if the process
is still alive ``shutdown_grace_s`` later (a request still computing, a hung store), the history is flushed
once more (what committed is safe already) and the process exits with status 1. An answer that never left was
never acknowledged, so nothing acknowledged is lost.
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


def install_graceful_shutdown(app: FastAPI, grace_s: float) -> None:
    """Arm the SIGTERM deadline when the app starts (in the server's main thread: tests that serve it from a
    thread of their own are left alone)."""
    previous: Callable[[Any], AbstractAsyncContextManager[Any]] = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app_: Any) -> AsyncIterator[Any]:
        arm_sigterm_deadline(grace_s, lambda: _flush_history(app))
        async with previous(app_) as state:
            yield state

    app.router.lifespan_context = lifespan


def arm_sigterm_deadline(grace_s: float, before_exit: Callable[[], None]) -> bool:
    """Chain a handler after the server's SIGTERM handler that starts the deadline timer; False when there is
    no server handler to chain to (not the main thread, or SIGTERM still kills at once)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    server_handler = signal.getsignal(signal.SIGTERM)
    if not callable(server_handler):
        return False
    started = threading.Event()

    def on_sigterm(sig: int, frame: FrameType | None) -> None:
        server_handler(sig, frame)
        if not started.is_set():
            started.set()
            timer = threading.Timer(grace_s, _give_up, args=(grace_s, before_exit))
            timer.daemon = True
            timer.start()

    signal.signal(signal.SIGTERM, on_sigterm)
    return True


def _give_up(grace_s: float, before_exit: Callable[[], None]) -> None:
    logger.error("shutdown: requests still running %g s after SIGTERM; flushing the history and exiting", grace_s)
    try:
        before_exit()
    finally:
        os._exit(1)


def _flush_history(app: FastAPI) -> None:
    history = getattr(app.state, "history", None)
    if history is not None:
        history.close(FLUSH_AFTER_GRACE_S)
