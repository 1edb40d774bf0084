"""A per-request time limit the engine and the adapters check in their loops (cooperative cancellation).

The service sets the deadline around each request's work (``deadline_scope``); long loops call
``check_deadline()``, which costs one clock read and raises ``DeadlineExceeded`` once the time is up.
The deadline lives in a context variable, so concurrent requests in other threads have their own, and code
run outside any scope (the command line, tests) never times out. Standalone on purpose (it imports only the error
hierarchy's root): any layer may import it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ClassVar

from costmodel.errors import ServiceError

_deadline: ContextVar[float | None] = ContextVar("pushdown_deadline", default=None)


class DeadlineExceeded(ServiceError):
    """The request's time limit passed; the service answers 503 ``time_limit``, to be retried smaller.

    Raised with no argument where the limit is not known (``check_deadline``, an interrupt landing in a thread);
    the service's runner raises it again with its ``limit_s`` before it reaches the caller.

    >>> DeadlineExceeded(10).to_wire()["detail"]
    {'limit_s': 10}
    """

    status: ClassVar[int] = 503
    headers: ClassVar[dict[str, str]] = {"Retry-After": "1"}

    def __init__(self, limit_s: float | None = None) -> None:
        limit = "its time limit" if limit_s is None else f"the limit of {limit_s:g} s"
        message = (
            f"the request took longer than {limit} and was stopped (PUSHDOWN_REQUEST_TIME_LIMIT_S); "
            "send a smaller plan or query"
        )
        super().__init__("time_limit", message, "$", None if limit_s is None else {"limit_s": limit_s})
        self.limit_s = limit_s


@contextmanager
def deadline_scope(seconds: float | None, *, at: float | None = None) -> Iterator[None]:
    """Run the block with a deadline ``seconds`` from now (or at monotonic time ``at``); None: no deadline.

    >>> with deadline_scope(60):
    ...     check_deadline()
    """
    when = at if at is not None else (None if seconds is None else time.monotonic() + seconds)
    token = _deadline.set(when)
    try:
        yield
    finally:
        _deadline.reset(token)


def check_deadline() -> None:
    """Raise ``DeadlineExceeded`` if the current deadline has passed; call it in long loops."""
    when = _deadline.get()
    if when is not None and time.monotonic() > when:
        raise DeadlineExceeded()


def remaining() -> float | None:
    """Seconds left before the deadline (negative once passed), None without one."""
    when = _deadline.get()
    return None if when is None else when - time.monotonic()
