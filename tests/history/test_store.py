"""The history store on SQLite and on a real PostgreSQL server: schema, migrations, writes, reads, aggregates."""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from service.database import backend_from_url
from service.database.pool import ConnectionPool
from service.history import MIGRATIONS, Filters, HistoryStore, Record, build_record, explain_tree
from tests.history.conftest import NOW, seed
from tests.postgres import PostgresServer, connections_to
from tests.serving import wait_until

LATEST = MIGRATIONS[-1].version


def test_schema_is_created_on_first_use_and_migrating_again_changes_nothing(store_url: str) -> None:
    store = HistoryStore.from_url(store_url)
    assert store.list(Filters()) == ([], 0)  # first use creates the schema
    assert store.schema_version() == LATEST
    assert store.migrate() == LATEST
    assert HistoryStore.from_url(store_url).migrate() == LATEST


def test_an_old_schema_is_migrated_and_keeps_its_rows(store_url: str, seed_records: list[Record]) -> None:
    old = HistoryStore.from_url(store_url)
    assert old.migrate(upto=1) == 1
    write_as_version_1(store_url, seed_records[:3])
    new = HistoryStore.from_url(store_url)
    assert new.migrate() == LATEST
    assert new.list(Filters())[1] == 3
    kept = new.get(seed_records[0].id)  # an uncompressed body from before migration 4 reads as before
    assert kept is not None and kept["response"]["request_id"] == seed_records[0].id
    assert new.counters()["recorded"] == 3  # migration 4 counts the rows it finds
    assert new.counters()["stored_bytes"] > 3 * 256


def write_as_version_1(url: str, records: list[Record]) -> None:
    """Rows as a release with schema version 1 wrote them: uncompressed text bodies, no counters."""
    backend = backend_from_url(url)
    columns = (
        "id, created_at, day, pipeline, task, run, input_form, mode, cost_before, cost_after, saved, savings, "
        "pushed, kept, blocked, sources, model_version, statistics_version, duration_ms, request, response"
    )
    con = backend.open()
    cur = con.cursor()
    backend.begin(con)
    for r in records:
        row = (r.id, backend.timestamp(r.created_at), r.day, r.pipeline, r.task, r.run, r.input_form, r.mode)
        row += (r.cost_before, r.cost_after, r.saved, r.savings, r.pushed, r.kept, r.blocked, "{}", None, None, None)
        row += (r.request_json, r.response_json)
        cur.execute(backend.sql(f"INSERT INTO optimizations ({columns}) VALUES ({', '.join(['?'] * 21)})"), row)
    backend.commit(con)
    con.close()


def test_two_processes_starting_together_migrate_once(store_url: str) -> None:
    errors: list[BaseException] = []

    def start() -> None:
        try:
            HistoryStore.from_url(store_url).migrate()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert HistoryStore.from_url(store_url).schema_version() == LATEST


def test_records_round_trip_with_every_field(store_url: str, seed_records: list[Record]) -> None:
    store = HistoryStore.from_url(store_url)
    seed(store, seed_records)
    original = next(r for r in seed_records if r.input_form == "sql")
    got = store.get(original.id)
    assert got is not None
    assert got["pipeline"] == original.pipeline and got["task"] == original.task and got["run"] == original.run
    assert got["input_form"] == "sql" and got["mode"] == "cost"
    assert got["cost_before"] == pytest.approx(original.cost_before)
    assert got["cost_after"] == pytest.approx(original.cost_after)
    assert got["saved"] == pytest.approx(original.cost_before - original.cost_after)
    assert got["savings"] == pytest.approx(original.savings)
    assert (got["pushed"], got["kept"], got["blocked"]) == (original.pushed, original.kept, original.blocked)
    assert got["sources"] == original.sources
    assert got["model_version"] == original.model_version == "1"
    assert got["created_at"].startswith(original.created_at.isoformat()[:19])
    assert got["request"]["sql"].startswith("SELECT c.name")
    assert got["response"]["request_id"] == original.id
    assert {(r["action"], r["reason"]) for r in got["reasons"]} >= {("blocked", "not_on_group_keys")}
    assert store.get("no-such-id") is None


def test_list_is_newest_first_paged_and_filtered(store_url: str, seed_records: list[Record]) -> None:
    store = HistoryStore.from_url(store_url)
    seed(store, seed_records)
    items, total = store.list(Filters(), limit=5)
    assert total == len(seed_records) and len(items) == 5
    newest = sorted(seed_records, key=lambda r: r.created_at, reverse=True)
    assert [i["id"] for i in items] == [r.id for r in newest[:5]]
    page2, _ = store.list(Filters(), limit=5, offset=5)
    assert [i["id"] for i in page2] == [r.id for r in newest[5:10]]
    assert "request" not in items[0] and "response" not in items[0]

    only = Filters(pipeline="fraud_scores", task="score")
    items, total = store.list(only, limit=500)
    assert total == sum(1 for r in seed_records if (r.pipeline, r.task) == ("fraud_scores", "score")) > 0
    assert {(i["pipeline"], i["task"]) for i in items} == {("fraud_scores", "score")}

    window = Filters(date_from=date(2026, 11, 18), date_to=date(2026, 11, 19))
    items, total = store.list(window, limit=500)
    assert total == sum(1 for r in seed_records if "2026-11-18" <= r.day <= "2026-11-19") > 0
    assert {i["day"] for i in items} == {"2026-11-18", "2026-11-19"}


def test_savings_totals_series_and_reasons_match_the_records(store_url: str, seed_records: list[Record]) -> None:
    store = HistoryStore.from_url(store_url)
    seed(store, seed_records)
    result = store.savings(Filters())
    before = sum(r.cost_before for r in seed_records)
    after = sum(r.cost_after for r in seed_records)
    totals = result["totals"]
    assert totals["requests"] == len(seed_records)
    assert totals["cost_before"] == pytest.approx(before)
    assert totals["cost_after"] == pytest.approx(after)
    assert totals["saved"] == pytest.approx(before - after)
    assert totals["savings"] == pytest.approx(1 - after / before, abs=1e-6)
    assert totals["pushed"] == sum(r.pushed for r in seed_records)

    days = Counter(r.day for r in seed_records)
    assert [(d["day"], d["requests"]) for d in result["by_day"]] == sorted(days.items())
    assert result["by_day"][-1]["day"] == NOW.date().isoformat()

    pipelines = {p["pipeline"]: p for p in result["by_pipeline"]}
    assert set(pipelines) == {r.pipeline for r in seed_records}
    saved = [p["saved_vs_baseline"] for p in result["by_pipeline"]]
    assert saved == sorted(saved, reverse=True)  # what each saved against rule-based pushdown: the headline
    web = [r for r in seed_records if r.pipeline == "web_sessions"]
    assert pipelines["web_sessions"]["saved"] == pytest.approx(sum(r.cost_before - r.cost_after for r in web))
    assert {(t["pipeline"], t["task"]) for t in result["by_task"]} == {(r.pipeline, r.task) for r in seed_records}

    expected: Counter[tuple[str, str]] = Counter()
    for r in seed_records:
        for kind, name, n in r.tallies:
            if kind in ("kept", "blocked"):
                expected[(kind, name)] += n
    got = {(x["action"], x["reason"]): x["count"] for x in result["reasons"]}
    assert got == dict(expected)
    assert {"limit", "not_on_group_keys", "not_beneficial"} <= {x["reason"] for x in result["reasons"]}
    assert {s["source"] for s in result["sources"]} == {"default", "statistics"}
    assert result["pipelines"] == sorted({r.pipeline for r in seed_records})

    narrowed = store.savings(Filters(pipeline="web_sessions"))
    assert narrowed["totals"]["requests"] == len(web)
    assert narrowed["pipelines"] == result["pipelines"]  # the filter's choices stay all pipelines


def test_empty_history_has_zero_totals(store_url: str) -> None:
    result = HistoryStore.from_url(store_url).savings(Filters())
    assert result["totals"]["requests"] == 0 and result["totals"]["savings"] == 0.0
    assert result["by_day"] == [] and result["reasons"] == []


def test_sqlite_runs_in_wal_mode(sqlite_url: str, seed_records: list[Record]) -> None:
    seed(HistoryStore.from_url(sqlite_url), seed_records[:1])
    with sqlite3.connect(Path(sqlite_url.removeprefix("sqlite:///"))) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_unsupported_urls_are_refused() -> None:
    with pytest.raises(ValueError, match="sqlite:/// and postgresql://"):
        HistoryStore.from_url("mysql://db/x")
    assert HistoryStore.from_url("postgres://u@h/db").backend == "postgresql"


# ---------------------------------------------------------------- what a record holds


def test_a_record_summarizes_the_answer() -> None:
    body = {
        "plan": {"op": "scan", "table": "t"},
        "catalog": {"tables": {"t": {"ref": "cities", "version": 3}, "u": {"ref": "states"}}},
        "options": {"mode": "always"},
        "context": {"pipeline": "p", "task": "t", "run": 7},
    }
    answer = {
        "request_id": "abc",
        "context": body["context"],
        "decisions": [
            {"predicate": "a > 1", "operator": "n2", "action": "pushed", "reason": "beneficial"},
            {"predicate": "b > 1", "operator": "n2", "action": "kept", "reason": "not_beneficial"},
            {"predicate": "c > 1", "operator": "n3", "action": "blocked", "reason": "limit"},
            {"predicate": "c > 1", "operator": "n4", "action": "blocked", "reason": "limit"},
        ],
        "estimates": [{"source": "sample"}, {"source": "default"}, {"source": "sample"}],
        "cost": {"before": {"total": 100.0}, "after": {"total": 40.0}, "savings": 0.6},
        "model_version": "1",
    }
    record = build_record(body, answer, duration_ms=1.5, created_at=NOW)
    assert (record.id, record.pipeline, record.task, record.run) == ("abc", "p", "t", "7")
    assert (record.input_form, record.mode, record.day) == ("plan", "always", "2026-11-20")
    assert (record.cost_before, record.cost_after, record.saved, record.savings) == (100.0, 40.0, 60.0, 0.6)
    assert (record.pushed, record.kept, record.blocked) == (1, 1, 2)
    assert record.sources == {"sample": 2, "default": 1}
    assert ("blocked", "limit", 2) in record.tallies and ("source", "sample", 2) in record.tallies
    assert record.statistics_version == {
        "t": {"ref": "cities", "version": 3},
        "u": {"ref": "states", "version": "current"},
    }
    assert record.model_version == "1"
    assert build_record({"sql": "select 1"}, {**answer, "statistics": {"cities": 4}}).statistics_version == {
        "cities": 4
    }


def test_explain_text_becomes_a_tree_with_the_cost_table() -> None:
    text = (
        "Projection: c.name  [n1 rows=10 cost=10]\n"
        "  Inner Join: c.id = d.id  [n2 rows=10 cost=40]\n"
        "    TableScan: cities AS c filters=[c.name LIKE 'A%']  [n3 rows=20 cost=20 sel=0.1 [0, 1] default]\n"
        "    TableScan: cities AS d  [n4 rows=20 cost=20]\n"
    )
    nodes = [
        {"id": "n1", "operator": "project", "rows_in": 10, "rows_out": 10, "k": 1, "cost": 10},
        {"id": "n3", "operator": "scan", "rows_in": 20, "rows_out": 20, "k": 1, "cost": 20},
    ]
    (root,) = explain_tree(text, nodes)
    assert (root["id"], root["label"], root["cost"]) == ("n1", "Projection: c.name", 10)
    (join,) = root["children"]
    assert join["id"] == "n2" and join["cost"] is None and len(join["children"]) == 2
    scan = join["children"][0]
    assert scan["label"] == "TableScan: cities AS c filters=[c.name LIKE 'A%']"
    assert scan["annotation"].startswith("n3 rows=20") and scan["rows_out"] == 20


def _connections_held(store_url: str) -> int:
    """Connections this process holds to the store's database, as the database (or the kernel) counts them."""
    if store_url.startswith("sqlite:///"):
        path = Path(store_url.removeprefix("sqlite:///")).resolve()
        fds = Path("/proc/self/fd")
        return sum(1 for fd in fds.iterdir() if _link(fd) == str(path))
    return connections_to(store_url)


def _link(fd: Path) -> str:
    try:
        return str(Path(fd).readlink())
    except OSError:  # closed since listed
        return ""


def test_calls_from_short_lived_threads_share_a_few_connections(store_url: str) -> None:
    """The server runs each request on a new thread; a connection kept per thread outlived it (one per request)."""
    store = HistoryStore.from_url(store_url)
    assert store.list(Filters()) == ([], 0)

    def one_by_one(n: int) -> None:  # each thread finds the connection the last one gave back
        for _ in range(n):
            thread = threading.Thread(target=store.list, args=(Filters(),))
            thread.start()
            thread.join()

    def at_once(n: int) -> None:  # n transactions open together need n connections
        barrier = threading.Barrier(n)

        def call() -> None:
            with store._connect() as con:
                barrier.wait(timeout=30)
                con.cursor().execute("SELECT 1")

        threads = [threading.Thread(target=call) for _ in range(n)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    one_by_one(30)
    # polled: a PostgreSQL backend leaves pg_stat_activity a moment after its client closed the connection
    assert wait_until(lambda: 1 <= _connections_held(store_url) <= 2)  # SQLite may keep a closed one's descriptor
    for _ in range(3):
        at_once(8)
        one_by_one(30)
        # bounded by the most open at once, not one more per thread (SQLite keeps closed ones' descriptors for
        # reuse while others are open)
        assert wait_until(lambda: _connections_held(store_url) <= 8)
    if store_url.startswith("postgresql"):  # the rest closed when given back
        assert wait_until(lambda: _connections_held(store_url) <= ConnectionPool.IDLE)
    store.close()
    assert wait_until(lambda: _connections_held(store_url) == 0)


def test_after_the_database_drops_every_connection_one_call_fails_and_the_next_reconnects(
    postgres: PostgresServer,
) -> None:
    url = postgres.new_database()
    store = HistoryStore.from_url(url)
    barrier = threading.Barrier(3)

    def together() -> None:
        with store._connect() as con:  # three open at once: three left idle
            barrier.wait(timeout=30)
            con.cursor().execute("SELECT 1")

    threads = [threading.Thread(target=together) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:  # as a restart or a proxy would
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    with pytest.raises(psycopg.OperationalError):
        store.list(Filters())
    assert store.list(Filters()) == ([], 0)  # not the next stale one: the idle ones went with the first
    store.close()
