"""The request cache (issue 19.2): hits, misses on any changed input, invalidation, bounds, bypass.

In process through ``OptimizeService.answer`` (what ``POST /optimize`` calls) with real statistics stores, and
over real HTTP for the header, the history and feedback.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.analyzed_tables import source_fingerprint
from service.optimize import OptimizeInput, OptimizeService
from service.request_cache import MAX_PROBE_FAILURES, Entry, RequestCache, request_cache
from service.settings import Settings
from service.statistics import StatisticsStore
from tests.history.requests import CATALOG, JOIN_PLAN

Serve = Callable[[FastAPI], AbstractContextManager[str]]


def plan_request(**changes: Any) -> OptimizeInput:
    fields: dict[str, Any] = {"plan": copy.deepcopy(JOIN_PLAN), "catalog": copy.deepcopy(CATALOG)}
    fields.update(changes)
    return OptimizeInput(**fields)


def without_head(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k not in ("request_id", "client_request_id", "cache")}


@pytest.fixture
def service() -> OptimizeService:
    return OptimizeService(cache=RequestCache())


def test_a_repeat_is_a_hit_with_the_same_answer_and_its_own_id(service: OptimizeService) -> None:
    first = service.answer(plan_request(), "id-1")
    second = service.answer(plan_request(), "id-2", "caller-7")
    assert (first.cache, second.cache) == ("miss", "hit")
    sent = json.loads(second.payload)
    assert sent["cache"]["hit"] is True and sent["cache"]["age_s"] >= 0
    assert (sent["request_id"], sent["client_request_id"]) == ("id-2", "caller-7")
    assert json.loads(first.payload)["cache"] == {"hit": False}
    assert without_head(sent) == without_head(json.loads(first.payload))
    assert json.loads(second.record) == second.answer  # the history gets the full answer, as computed
    assert second.answer["decisions"] and second.answer["explain"]["after"]


def test_the_same_request_written_differently_is_a_hit(service: OptimizeService) -> None:
    service.answer(plan_request())
    reordered = json.loads(json.dumps(JOIN_PLAN), object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    assert service.answer(plan_request(plan=reordered)).cache == "hit"
    # the context is an echo when feedback is off: another run of the pipeline hits too
    assert service.answer(plan_request(context={"pipeline": "p", "run": "2"})).cache == "hit"


def _changed_literal() -> dict[str, Any]:
    plan = copy.deepcopy(JOIN_PLAN)
    text = json.dumps(plan)
    assert "'A%'" in text or "A%" in text
    return json.loads(text.replace("A%", "B%", 1))


def _changed_statistics() -> dict[str, Any]:
    catalog = copy.deepcopy(CATALOG)
    table = next(iter(catalog["tables"].values()))
    table["row_count"] = table["row_count"] * 10
    return catalog


@pytest.mark.parametrize(
    "changes",
    [
        {"plan": _changed_literal()},
        {"catalog": _changed_statistics()},
        {"options": {"mode": "always"}},
        {"options": {"operator_costs": {"join": 7.0}}},
        {"detail": "full"},  # a plan at full detail also gets the Spark SQL: another answer
    ],
    ids=["literal", "statistics", "mode", "operator cost", "detail full"],
)
def test_any_changed_input_is_a_miss(service: OptimizeService, changes: dict[str, Any]) -> None:
    base = service.answer(plan_request())
    changed = service.answer(plan_request(**changes))
    assert changed.cache == "miss"
    assert service.answer(plan_request(**changes)).cache == "hit"
    assert service.answer(plan_request()).cache == "hit"
    assert base.cache == "miss"


def test_detail_trims_a_cached_answer_without_recomputing(service: OptimizeService) -> None:
    sql = "SELECT c.name FROM cities c JOIN states s ON c.state_id = s.id WHERE c.name LIKE 'A%'"
    catalog = {"tables": {name: CATALOG["tables"][name] for name in ("cities", "states")}}
    full = service.answer(OptimizeInput(sql=sql, catalog=catalog, detail="full"))
    summary = service.answer(OptimizeInput(sql=sql, catalog=catalog))
    assert (full.cache, summary.cache) == ("miss", "hit")  # SQL input renders Spark SQL at either detail
    assert "decisions" in json.loads(full.payload) and "decisions" not in json.loads(summary.payload)


def _store_with_items(tmp_path: Path, rows: int = 50, source: dict[str, Any] | None = None) -> StatisticsStore:
    store = StatisticsStore(tmp_path / "pushdown.db", tmp_path / "samples")
    stats: dict[str, Any] = {
        "columns": [{"name": "id", "type": "int"}],
        "row_count": rows,
        "source": source or {"table": "items"},
    }
    if source is not None:
        stats["fingerprint"] = source_fingerprint(source)
    store.commit("items", stats, store.stage_sample("items", None))
    return store


def _cached_service(store: StatisticsStore, settings: Settings) -> OptimizeService:
    service = OptimizeService(store)
    service.cache = request_cache(settings, store, None)
    return service


SQL_ON_ITEMS = OptimizeInput(sql="SELECT id FROM items WHERE id > 3")


def test_an_analyze_in_this_process_invalidates_answers_that_read_statistics(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    store = _store_with_items(tmp_path)
    service = _cached_service(store, make_settings(data_dir=tmp_path, cache_check_interval_s=3600))
    assert service.answer(SQL_ON_ITEMS).cache == "miss"
    assert service.answer(SQL_ON_ITEMS).cache == "hit"
    _store_with_items(tmp_path, rows=5000)  # another store object, same database: found by the probe only...
    store.commit(
        "items", {"columns": [{"name": "id", "type": "int"}], "row_count": 7}, store.stage_sample("items", None)
    )
    again = service.answer(SQL_ON_ITEMS)  # ...this one in this process: at once
    assert again.cache == "miss"
    assert [u["row_count"] for u in again.answer["statistics"]] == [7]


def test_an_analyze_by_another_process_is_found_by_the_probe(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    store = _store_with_items(tmp_path)
    service = _cached_service(store, make_settings(data_dir=tmp_path, cache_check_interval_s=3600))
    service.answer(SQL_ON_ITEMS)
    assert service.answer(SQL_ON_ITEMS).cache == "hit"
    _store_with_items(tmp_path, rows=5000)  # a second store on the same file: as another process commits
    assert service.cache is not None
    service.cache.check()  # what the probe's thread does every interval
    again = service.answer(SQL_ON_ITEMS)
    assert again.cache == "miss" and [u["row_count"] for u in again.answer["statistics"]] == [5000]


def test_a_changed_source_file_is_a_miss_that_warns(tmp_path: Path, make_settings: Callable[..., Settings]) -> None:
    data = tmp_path / "items"
    data.mkdir()
    (data / "part-0.parquet").write_bytes(b"x" * 10)
    store = _store_with_items(tmp_path, source={"path": str(data), "format": "parquet"})
    service = _cached_service(store, make_settings(data_dir=tmp_path, cache_check_interval_s=3600))
    service.answer(SQL_ON_ITEMS)
    assert service.answer(SQL_ON_ITEMS).cache == "hit"
    (data / "part-0.parquet").write_bytes(b"y" * 20)
    os.utime(data / "part-0.parquet", ns=(1, 1))
    changed = service.answer(SQL_ON_ITEMS)
    assert changed.cache == "miss" and changed.answer["statistics"][0]["source_changed"] is True
    assert service.answer(SQL_ON_ITEMS).cache == "miss"  # an answer that warns is not kept: it is rare


def test_a_plan_with_its_own_statistics_does_not_depend_on_the_store(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    store = _store_with_items(tmp_path)
    service = _cached_service(store, make_settings(data_dir=tmp_path, cache_check_interval_s=3600))
    service.answer(plan_request())
    _store_with_items(tmp_path, rows=5000)
    assert service.cache is not None
    service.cache.check()
    assert service.answer(plan_request()).cache == "hit"


def test_the_cache_stays_within_its_entries_and_bytes() -> None:
    cache = RequestCache(max_entries=2, max_bytes=10**9)
    service = OptimizeService(cache=cache)
    modes = ["cost", "always", "never"]
    for mode in modes:
        service.answer(plan_request(options={"mode": mode}))
    assert len(cache) == 2 and cache.counters.evictions == 1
    assert service.answer(plan_request(options={"mode": "cost"})).cache == "miss"  # the oldest went first
    assert service.answer(plan_request(options={"mode": "never"})).cache == "hit"

    one = service.answer(plan_request()).record
    small = RequestCache(max_entries=100, max_bytes=int(len(one) * 2.5))
    service = OptimizeService(cache=small)
    for mode in modes:
        service.answer(plan_request(options={"mode": mode}))
        assert small.size_bytes <= small.max_bytes
    assert len(small) < 3

    tiny = RequestCache(max_entries=100, max_bytes=100)  # an answer larger than the whole cache is not kept
    service = OptimizeService(cache=tiny)
    service.answer(plan_request())
    assert len(tiny) == 0 and service.answer(plan_request()).cache == "miss"


def test_a_request_can_bypass_the_cache(service: OptimizeService) -> None:
    service.answer(plan_request())
    assert service.answer(plan_request(), use_cache=False).cache == "bypass"
    bypass = service.answer(plan_request(options={"cache": False}))
    assert bypass.cache == "bypass" and json.loads(bypass.payload)["cache"] == {"hit": False}
    assert OptimizeService().answer(plan_request()).cache == "off"
    with pytest.raises(Exception, match="cache must be true or false"):
        service.answer(plan_request(options={"cache": "no"}))


# ---------------------------------------------------------------- over HTTP


def test_over_http_the_header_says_hit_and_the_history_records_every_request(
    serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    app = create_app(make_settings(data_dir=tmp_path, history_durability="commit"))
    body = {"plan": JOIN_PLAN, "catalog": CATALOG, "context": {"pipeline": "cached"}}
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        answers = [http.post("/optimize", json=body) for _ in range(3)]
        assert [a.headers["Pushdown-Cache"] for a in answers] == ["miss", "hit", "hit"]
        assert [a.json()["cache"]["hit"] for a in answers] == [False, True, True]
        assert all(a.headers["Pushdown-History"] == "recorded" for a in answers)
        ids = {a.json()["request_id"] for a in answers}
        assert len(ids) == 3
        page = http.get("/api/optimizations", params={"pipeline": "cached"}).json()
        assert {item["id"] for item in page["items"]} == ids
        record = http.get(f"/api/optimizations/{answers[2].json()['request_id']}").json()
        assert record["response"]["cache"]["hit"] is True and record["response"]["decisions"]
        assert record["trees"]["after"]  # the drill-down renders a cached answer as any other
        bypass = http.post("/optimize", json=body, headers={"Cache-Control": "no-cache"})
        assert bypass.headers["Pushdown-Cache"] == "bypass"
    off = create_app(make_settings(data_dir=tmp_path / "off", cache_enabled=False))
    with serve(off) as url:
        assert httpx.post(f"{url}/optimize", json=body, timeout=30).headers["Pushdown-Cache"] == "off"


def test_over_http_feedback_on_a_table_invalidates_the_answers_that_read_it(
    serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    app = create_app(make_settings(data_dir=tmp_path, cache_check_interval_s=3600))
    sql = "SELECT c.name FROM cities c WHERE c.name LIKE 'A%'"
    body = {"sql": sql, "catalog": {"tables": {"cities": CATALOG["tables"]["cities"]}}, "context": {"task": "t"}}
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        first = http.post("/optimize", json={**body, "detail": "full"}).json()
        assert http.post("/optimize", json=body).headers["Pushdown-Cache"] == "hit"
        scan = next(n["id"] for n in first["cost"]["after"]["nodes"] if n["operator"] == "scan")
        posted = http.post(f"/feedback/{first['request_id']}", json={"nodes": [{"id": scan, "rows_out": 1}]})
        assert posted.status_code == 200, posted.text
        after = http.post("/optimize", json=body)
        assert after.headers["Pushdown-Cache"] == "miss"
        assert any(e["source"] == "feedback" for e in after.json()["estimates"])
        assert http.post("/optimize", json=body).headers["Pushdown-Cache"] == "hit"


def test_the_probe_thread_finds_another_process_s_analyze_within_the_interval(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    store = _store_with_items(tmp_path)
    service = _cached_service(store, make_settings(data_dir=tmp_path, cache_check_interval_s=0.05))
    service.answer(SQL_ON_ITEMS)
    _store_with_items(tmp_path, rows=5000)
    deadline = time.monotonic() + 10
    while service.answer(SQL_ON_ITEMS).cache == "hit" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [u["row_count"] for u in service.answer(SQL_ON_ITEMS).answer["statistics"]] == [5000]


def test_a_store_that_cannot_be_read_drops_the_answers_that_read_it() -> None:
    calls = {"n": 0}

    def probe() -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError("database is locked")
        return {"statistics": ()}

    cache = RequestCache(check_interval_s=3600, probe=probe)
    assert cache.get(b"nothing") is None and calls["n"] == 1  # the first lookup reads the state once
    cache.put(b"reads", Entry({}, b"}", b"}", ("statistics",)))
    cache.put(b"plain", Entry({}, b"}", b"}", ()))
    for _ in range(MAX_PROBE_FAILURES - 1):
        cache.check()
    assert cache.get(b"reads") is not None  # a few failures: kept (the next read may work)
    cache.check()
    assert cache.get(b"reads") is None and cache.get(b"plain") is not None
