"""What only the cyclic garbage collector could free after a call: the check behind the tests that requests leave
no reference cycles (tests/costmodel/test_reference_cycles.py, tests/sql/test_no_cycles.py)."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable
from typing import Any

#: the packages whose objects a request (or a test) makes; garbage without any of theirs came from elsewhere in
#: the same window (another thread: a database driver an earlier test left to close, say) and is not counted
OURS = ("sqlglot", "service", "costmodel", "api", "tests")


def _ours(o: object) -> bool:
    module = getattr(o, "__module__", None)
    if not isinstance(module, str):
        module = type(o).__module__
    return module.split(".")[0] in OURS


def cyclic_garbage(run: Callable[[], Any]) -> Counter[str]:
    """``run()`` with the collector paused; what it left that only the collector could free, by type (functions
    by qualified name), or nothing when none of it is of ``OURS``."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        if not any(_ours(o) for o in gc.garbage):
            return Counter()
        return Counter(getattr(o, "__qualname__", type(o).__name__) for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
