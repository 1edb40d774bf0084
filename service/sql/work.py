"""Bounded work for the adapter: the cyclic garbage collector paused while a query is translated, and nesting
too deep for the translator refused with a clear error.

A 20,000-term predicate makes hundreds of thousands of small sqlglot objects;
each full collection walks all of them, so with the collector running the
translation grows faster than linearly (the time for 20,000 OR terms halves
without it). Nothing the adapter builds is cyclic garbage, so pausing the
collector for the duration loses nothing. The pause is process-wide, so
concurrent translations share it: the first one in pauses, the last one out
resumes, and a collector the process had already disabled stays disabled.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from service.sql.errors import SqlError

_lock = threading.Lock()
_active = 0
_paused_by_us = False


@contextmanager
def translating() -> Iterator[None]:
    """Pause the cyclic GC and turn a RecursionError into ``SqlError("too_deep")``.

    >>> with translating():
    ...     gc.isenabled()
    False
    """
    global _active, _paused_by_us
    with _lock:
        if _active == 0 and gc.isenabled():
            gc.disable()
            _paused_by_us = True
        _active += 1
    try:
        yield
    except RecursionError as err:
        raise SqlError(
            "too_deep", "the query nests expressions or subqueries too deeply to translate; flatten it"
        ) from err
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _paused_by_us:
                _paused_by_us = False
                gc.enable()
