"""The statistics store on SQLite and on a real PostgreSQL server (the history tests' server fixture)."""

from __future__ import annotations

import threading
from pathlib import Path

import pyarrow as pa

from service.statistics import StatisticsStore, resolve_catalog

STATS = {
    "name": "events",
    "columns": [{"name": "id", "type": "bigint"}, {"name": "kind", "type": "string"}],
    "row_count": 3,
    "column_stats": {"id": {"ndv": 3, "min": 1, "max": 3, "null_count": 0}},
}


def _store(store_url: str, tmp_path: Path) -> StatisticsStore:
    if store_url.startswith("sqlite:///"):
        return StatisticsStore(Path(store_url.removeprefix("sqlite:///")), tmp_path / "samples")
    return StatisticsStore(None, tmp_path / "samples", store_url)


def test_versions_current_pointer_and_samples_survive_a_new_store_object(store_url: str, tmp_path: Path) -> None:
    store = _store(store_url, tmp_path)
    sample = pa.table({"id": [1, 2, 3], "kind": ["a", None, "b"]})
    assert store.commit("events", STATS, store.stage_sample("events", sample)) == 1
    assert store.commit("events", {**STATS, "row_count": 4}, store.stage_sample("events", sample)) == 2
    reopened = _store(store_url, tmp_path)  # as a restarted service sees it
    assert reopened.versions("events") == [1, 2]
    current = reopened.get("events")
    assert current is not None and current.version == 2 and current.stats["row_count"] == 4
    assert reopened.get("events", 1).stats["row_count"] == 3
    catalog, samples = resolve_catalog({"tables": {"e": {"ref": "events"}}}, reopened)
    assert catalog["tables"]["e"]["row_count"] == 4
    assert samples["e"].size == 3 and samples["e"].nulls["kind"].tolist() == [False, True, False]
    assert [t.name for t in reopened.tables()] == ["events"]


def test_reads_reuse_a_pooled_connection_and_a_commit_is_seen_by_the_next_read(store_url: str, tmp_path: Path) -> None:
    """A request reads each table's statistics; opening a connection per read took longer than optimizing."""
    store = _store(store_url, tmp_path)
    assert store.commit("events", STATS, store.stage_sample("events", None)) == 1
    opened = []
    backend_open = store._backend.open

    def counting_open() -> object:
        opened.append(1)
        return backend_open()

    store._backend.open = counting_open  # type: ignore[method-assign]
    threads = [threading.Thread(target=store.get, args=("events",)) for _ in range(30)]
    for thread in threads:  # one after another, each on a thread of its own, as the server runs requests
        thread.start()
        thread.join()
    catalog, _ = resolve_catalog({"tables": {"e": {"ref": "events"}}}, store)
    assert len(opened) <= 1, len(opened)  # the connection the commit used, or one opened once
    assert catalog["tables"]["e"]["row_count"] == 3
    other = _store(store_url, tmp_path)  # another worker process commits a new version
    assert other.commit("events", {**STATS, "row_count": 9}, other.stage_sample("events", None)) == 2
    current = store.get("events")  # through the pooled connection: no stale snapshot
    assert current is not None and current.version == 2 and current.stats["row_count"] == 9
    store.close()
    other.close()
