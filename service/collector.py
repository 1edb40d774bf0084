"""How a serving process runs Python's cyclic garbage collector: one setting for the server, its worker
processes and the latency benchmark, so the benchmark measures what the server runs.

A request that builds millions of objects (a 900 KB query's tokens) triggers full collections, each holding
the GIL for as long as it takes to walk the whole heap: measured 0.15 to 3.9 s apiece, nine of them in one
such request. Full collections a hundred times rarer (every ~20 million net allocations), with the objects that
exist once the process has started frozen out of them, remove those pauses. Young collections stay small: every
2,000 net allocations (Python's default is 700), so most requests of ordinary size, whose objects die young,
finish between two (a plan request then takes 1.3% fewer instructions), and each walks about 2,000 objects,
some 30 µs (a much larger first generation made each young collection a 60-250 ms pause on heavy requests,
and was no faster there). Acyclic garbage is freed by reference counting as before.
"""

from __future__ import annotations

import gc

#: young collections every 2,000 (not 700) net allocations; a full one after 1,000 (not 10) of the middle one's
THRESHOLDS = (2000, 10, 1000)


def tune_collector() -> None:
    """Freeze what exists now (modules, the app) out of every collection and make full collections rare (once
    started: a process's state, so no example here)."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
