"""A repeat of the same request bytes is not read again (issue 19.2): the service keeps the last bodies read.

What a kept body must never do: answer for other bytes, outlive the bound, change because an answer was computed
from it, or keep a stale answer (the request cache's generations still decide hit or miss).
"""

from __future__ import annotations

import doctest
import json
from functools import partial
from pathlib import Path

from service import recent_bodies
from service.optimize import OptimizeInput, OptimizeService
from service.recent_bodies import RecentBodies
from service.request import parse_ordinary_request
from service.request_cache import RequestCache
from tests.history.requests import CATALOG, JOIN_PLAN

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
PARSE = partial(parse_ordinary_request, max_json_depth=2500)


class CountingParse:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, raw: bytes) -> OptimizeInput | None:
        self.calls += 1
        return PARSE(raw)


def test_a_repeat_of_the_same_bytes_is_read_once_and_answered_from_the_cache() -> None:
    service = OptimizeService(cache=RequestCache())
    raw = json.dumps({"plan": JOIN_PLAN, "catalog": CATALOG}).encode()
    parse = CountingParse()
    first = service.read_body(raw, parse)
    assert first is not None and service.answer(first).cache == "miss"
    again = service.read_body(bytes(raw), parse)  # equal bytes, another object: as each request arrives
    assert again is first and parse.calls == 1
    assert service.cached(again) is not None
    other = service.read_body(raw.replace(b"}", b" }", 1), parse)  # the same JSON written otherwise: read
    assert other is not first and parse.calls == 2
    assert service.cached(other) is not None  # and still a hit: the cache key is the normalized request


def test_without_a_cache_every_body_is_read() -> None:
    service = OptimizeService()
    raw = json.dumps({"plan": JOIN_PLAN, "catalog": CATALOG}).encode()
    parse = CountingParse()
    assert service.read_body(raw, parse) is not service.read_body(raw, parse)
    assert parse.calls == 2


def test_answering_leaves_the_kept_body_as_it_was_read() -> None:
    """A kept body answers every repeat that misses (statistics changed, entry evicted): answering must not
    change it. Every TPC-H plan and query, answered twice without the cache, against a fresh read."""
    catalog = json.loads((TPCH / "catalog.json").read_text())
    bodies = [{"plan": json.loads(p.read_text()), "catalog": catalog} for p in sorted((TPCH / "plans").glob("*.json"))]
    bodies += [{"sql": q.read_text(), "catalog": catalog} for q in sorted((TPCH / "queries").glob("*.sql"))]
    service = OptimizeService(cache=RequestCache())
    for body in bodies:
        raw = json.dumps(body).encode()
        kept = service.read_body(raw, PARSE)
        assert kept is not None
        first = service.answer(kept, "a", use_cache=False).answer
        assert kept == PARSE(raw)
        assert service.answer(service.read_body(raw, PARSE) or kept, "a", use_cache=False).answer == first


def test_the_kept_bodies_stay_within_their_bound() -> None:
    bodies: RecentBodies[int] = RecentBodies(max_entries=3, max_body_bytes=10)
    for i in range(5):
        bodies.put(str(i).encode(), i)
    bodies.put(b"x" * 11, 99)  # over the size: never kept
    assert [bodies.get(str(i).encode()) for i in range(5)] == [None, None, 2, 3, 4]
    assert bodies.get(b"x" * 11) is None


def test_the_docstring_example_holds() -> None:
    assert doctest.testmod(recent_bodies).failed == 0
