"""A cache of answers for recurring requests: pipelines send the same query with the same statistics every run.

The key is the normalized request: its canonical JSON (keys sorted) without what cannot change the answer (the
request id is a header, the context is echoed, ``detail`` only trims what is sent, ``options.cache`` is the
bypass). An entry also remembers the *generations* of the state it read:

- ``statistics``: the analyzed tables (read when the catalog lacks a table the query reads, or names one by
  ``ref``); any analyze that commits changes it;
- ``feedback:<table>``: the observations on a table (read when the request has feedback on); any feedback
  post on the table changes it, and the request's context (pipeline and task) joins the key.

A hit whose generations moved is a miss. Changes made in this process bump the generations at once; changes
made by another process sharing the database (``--workers``, replicas, the CLI) are found by a probe that reads
the stores' state at most every ``check_interval_s`` seconds, so those reach the cache within that interval.
An entry whose answer reported an analyzed table's source files also re-checks their fingerprint on a hit.

Bounded by entries and bytes (least recently used first out).

    >>> cache = RequestCache(max_entries=2, max_bytes=1_000_000)
    >>> cache.put(b"k", Entry(answer={"a": 1}, full=b'"a":1}', summary=b'"a":1}', dependencies=()))
    >>> cache.get(b"k").answer, cache.get(b"x") is None
    ({'a': 1}, True)
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.feedback.use_case import FeedbackService
    from service.settings import Settings
    from service.statistics import StatisticsStore

logger = logging.getLogger(__name__)

STATISTICS = "statistics"
#: Failed reads of the stores' state in a row after which every answer that read a store is dropped.
MAX_PROBE_FAILURES = 5
#: Bytes an entry holds besides its JSON (the shared answer dict, the key): a rough per-entry charge.
ENTRY_OVERHEAD = 512


def feedback_dependency(table: str) -> str:
    return f"feedback:{table.lower()}"


class Generations:
    """A counter per piece of state answers depend on; bumping one invalidates the entries that read it."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def bump(self, names: Iterable[str]) -> None:
        with self._lock:
            for name in names:
                self._counts[name] = self._counts.get(name, 0) + 1

    def snapshot(self, names: tuple[str, ...]) -> tuple[int, ...]:
        counts = self._counts
        return tuple(counts.get(name, 0) for name in names)


@dataclass(slots=True)
class Entry:
    """One cached answer: the full answer without its per-request head (ids, context, cache), and the JSON of
    that rest for both details (each without its opening brace, to follow the head's JSON)."""

    answer: dict[str, Any]
    full: bytes
    summary: bytes
    dependencies: tuple[str, ...]
    generations: tuple[int, ...] = ()
    #: (source, digest when cached) of analyzed tables whose source files the answer checked
    fingerprints: tuple[tuple[Mapping[str, Any], str | None], ...] = ()
    created: float = field(default_factory=time.time)

    @property
    def size(self) -> int:
        return len(self.full) + len(self.summary) + ENTRY_OVERHEAD


@dataclass
class CacheCounters:
    hits: int = 0
    misses: int = 0
    stale: int = 0
    evictions: int = 0
    bypassed: int = 0


class RequestCache:
    """Answers by normalized request, least recently used first out past ``max_entries`` or ``max_bytes``."""

    def __init__(
        self,
        max_entries: int = 1024,
        max_bytes: int = 64 * 1024 * 1024,
        check_interval_s: float = 1.0,
        probe: Callable[[], Mapping[str, Any]] | None = None,
        fingerprint: Callable[[Mapping[str, Any]], str | None] | None = None,
    ) -> None:
        """``probe``: the stores' state, one token per dependency family (``statistics``, ``feedback:<table>``),
        read at most every ``check_interval_s``; ``fingerprint``: a source's current digest (None: unknown)."""
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.check_interval_s = check_interval_s
        self.generations = Generations()
        self.counters = CacheCounters()
        self._probe = probe
        self._fingerprint = fingerprint
        self._seen: Mapping[str, Any] | None = None
        self._failures = 0
        self._prober: threading.Thread | None = None
        self._prober_lock = threading.Lock()
        self._stopped = threading.Event()
        self._entries: OrderedDict[bytes, Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        """Bytes the entries hold (their JSON and a per-entry charge)."""
        return self._bytes

    def get(self, key: bytes) -> Entry | None:
        """The entry for ``key`` if the state it read has not changed since; counts a hit, miss or stale.

        Never reads a database: the probe runs on a thread of its own (started by the first lookup)."""
        if self._probe is not None and self._prober is None:
            self._start_prober()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        if entry is None:
            self.counters.misses += 1
            return None
        if self.generations.snapshot(entry.dependencies) != entry.generations or not self._sources_unchanged(entry):
            self.discard(key)
            self.counters.stale += 1
            self.counters.misses += 1
            return None
        self.counters.hits += 1
        return entry

    def put(self, key: bytes, entry: Entry, generations: tuple[int, ...] | None = None) -> None:
        """Store ``entry``; ``generations``: the snapshot taken *before* the answer was computed (so a change
        while it was computed makes it stale at once), else taken now. Too large an entry is not kept."""
        entry.generations = generations if generations is not None else self.generations.snapshot(entry.dependencies)
        size = entry.size
        if size > self.max_bytes or self.max_entries <= 0:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.size
            self._entries[key] = entry
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.size
                self.counters.evictions += 1

    def discard(self, key: bytes) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.size

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def invalidate(self, names: Iterable[str]) -> None:
        """State changed in this process (an analyze committed, feedback arrived): its readers are stale."""
        self.generations.bump(names)

    def check(self) -> None:
        """Read the stores' state once; bump every family whose token changed since the last read. After
        ``MAX_PROBE_FAILURES`` failed reads in a row every answer that read a store is dropped."""
        if self._probe is None:
            return
        try:
            state = dict(self._probe())
        except Exception as exc:  # noqa: BLE001 - a busy or unreachable database: try again next interval
            self._failures += 1
            if self._failures in (1, MAX_PROBE_FAILURES):  # once per streak, and when it costs the entries
                logger.warning("request cache: the stores' state cannot be read (%r)", exc)
            if self._failures >= MAX_PROBE_FAILURES:
                self._seen = None
                with self._lock:
                    read = {name for entry in self._entries.values() for name in entry.dependencies}
                self.generations.bump(read)
            return
        self._failures = 0
        seen, self._seen = self._seen, state
        if seen is None:
            return
        changed = [name for name in set(seen) | set(state) if seen.get(name) != state.get(name)]
        if changed:
            self.generations.bump(changed)

    def _start_prober(self) -> None:
        with self._prober_lock:
            if self._prober is not None:
                return
            self.check()  # the state the first answers are computed against
            self._prober = threading.Thread(
                target=_probe_forever,
                args=(weakref.ref(self), self.check_interval_s, self._stopped),
                name="pushdown-cache-probe",
                daemon=True,
            )
            self._prober.start()

    def close(self) -> None:
        """Stop the probe's thread (the app shuts down); lookups still work, without cross-process checks."""
        self._stopped.set()

    def _sources_unchanged(self, entry: Entry) -> bool:
        if not entry.fingerprints or self._fingerprint is None:
            return True
        return all(self._fingerprint(source) == digest for source, digest in entry.fingerprints)

    def status(self) -> dict[str, Any]:
        counters = self.counters
        return {
            "entries": len(self._entries),
            "bytes": self._bytes,
            "max_entries": self.max_entries,
            "max_bytes": self.max_bytes,
            "hits": counters.hits,
            "misses": counters.misses,
            "stale": counters.stale,
            "evictions": counters.evictions,
            "bypassed": counters.bypassed,
        }


def _probe_forever(cache_ref: weakref.ref[RequestCache], interval_s: float, stopped: threading.Event) -> None:
    """The probe's thread: every interval until the cache closes or is gone."""
    while not stopped.wait(max(interval_s, 0.01)):
        cache = cache_ref()
        if cache is None:
            return
        cache.check()
        del cache


def request_cache(
    settings: Settings, store: StatisticsStore | None, feedback: FeedbackService | None
) -> RequestCache | None:
    """The cache the settings ask for, wired to the stores: their changes in this process invalidate at once,
    other processes' changes at the next probe. None when ``cache_enabled`` is off."""
    if not settings.cache_enabled:
        return None
    feedback_store = feedback.store if feedback is not None else None

    def probe() -> dict[str, Any]:
        state: dict[str, Any] = {}
        if store is not None:
            state[STATISTICS] = store.state()
        if feedback_store is not None:
            state.update({feedback_dependency(t): token for t, token in feedback_store.state().items()})
        return state

    def fingerprint(source: Mapping[str, Any]) -> str | None:
        from service.analyzed_tables import source_fingerprint

        found = source_fingerprint(dict(source))
        return None if found is None else str(found["digest"])

    cache = RequestCache(
        settings.cache_max_entries,
        settings.cache_max_bytes,
        settings.cache_check_interval_s,
        probe=probe if store is not None or feedback_store is not None else None,
        fingerprint=fingerprint,
    )
    if store is not None:
        store.listeners.append(lambda _name: cache.invalidate([STATISTICS]))
    if feedback is not None:
        feedback.listeners.append(lambda tables: cache.invalidate(map(feedback_dependency, tables)))
    return cache
