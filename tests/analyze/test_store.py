"""The statistics store without Spark: versions, the atomic current pointer, samples, and request catalogs."""

from __future__ import annotations

import datetime as dt
import json
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from service.errors import InputError
from service.settings import Settings
from service.statistics import StatisticsStore, check_name, resolve_catalog, sample_from_arrow


def stats(rows: int, **extra: Any) -> dict[str, Any]:
    return {
        "columns": [{"name": "a", "type": "int"}, {"name": "s", "type": "string"}],
        "row_count": rows,
        "column_stats": {"a": {"ndv": 3, "min": 1, "max": 3, "null_count": 1}},
        "containers": [{"id": "f#rg0", "row_count": rows, "column_stats": {"a": {"min": 1, "max": 3}}}],
        "files": [{"id": "f", "row_count": rows}],
        "source": {"path": "/x", "format": "parquet"},
        **extra,
    }


SAMPLE = pa.table({"a": pa.array([1, None, 3], pa.int32()), "s": pa.array(["x", "y", None])})


def save(store: StatisticsStore, name: str, rows: int, sample: pa.Table | None = SAMPLE) -> int:
    return store.commit(name, stats(rows), store.stage_sample(name, sample))


def test_an_empty_store_creates_no_files(tmp_path: Path) -> None:
    store = StatisticsStore(tmp_path / "db" / "s.db", tmp_path / "samples")
    assert store.tables() == [] and store.get("t") is None and store.versions("t") == []
    assert not (tmp_path / "db").exists()


def test_versions_and_the_current_pointer(store: StatisticsStore) -> None:
    assert save(store, "t", 10) == 1
    assert save(store, "t", 20) == 2
    assert save(store, "u", 5) == 1
    assert store.versions("t") == [1, 2]
    current = store.get("t")
    assert current is not None and (current.version, current.stats["row_count"]) == (2, 20)
    old = store.get("t", 1)
    assert old is not None and old.stats["row_count"] == 10 and old.sample_path == "t/v1.parquet"
    assert store.get("t", 3) is None
    assert [(t.name, t.version, t.stats["row_count"]) for t in store.tables()] == [("t", 2, 20), ("u", 1, 5)]
    summary = store.tables()[0].summary()
    assert set(summary) == {"name", "version", "row_count", "analyzed_at", "source"}
    assert dt.datetime.fromisoformat(summary["analyzed_at"])
    assert (store.samples_dir / "t" / "v1.parquet").exists() and (store.samples_dir / "t" / "v2.parquet").exists()


def test_a_staged_sample_without_commit_changes_nothing(store: StatisticsStore) -> None:
    save(store, "t", 10)
    staged = store.stage_sample("t", SAMPLE)  # the job dies here, before its commit
    assert staged.path is not None and staged.path.exists() and staged.path.name.startswith(".tmp-")
    current = store.get("t")
    assert current is not None and current.version == 1 and store.versions("t") == [1]
    sample = store.sample(current)
    assert sample is not None and sample.size == 3
    assert save(store, "t", 30) == 2  # the next job is not disturbed by the leftover


def test_a_commit_that_fails_rolls_back(store: StatisticsStore) -> None:
    save(store, "t", 10)
    with pytest.raises(ValueError):
        store.commit("t", stats(20, bad=float("nan")), store.stage_sample("t", SAMPLE))  # not valid JSON
    assert store.versions("t") == [1] and store.get("t").version == 1  # type: ignore[union-attr]


def test_concurrent_commits_get_distinct_versions(store: StatisticsStore) -> None:
    save(store, "t", 1)
    threads = [threading.Thread(target=save, args=(store, "t", i)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.versions("t") == list(range(1, 10))
    assert store.get("t").version == 9  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden", "-x", "a..b", "x" * 129])
def test_unsafe_names_are_refused(name: str) -> None:
    with pytest.raises(InputError) as info:
        check_name(name)
    assert info.value.code == "invalid_table_name"


def test_settings_choose_sqlite_under_the_data_dir(tmp_path: Path) -> None:
    store = StatisticsStore.from_settings(Settings(data_dir=tmp_path, api_token=None))
    assert store.db_path == tmp_path / "pushdown.db" and store.samples_dir == tmp_path / "samples"
    on_postgres = StatisticsStore.from_settings(Settings(data_dir=tmp_path, database_url="postgresql://u@db/p"))
    assert on_postgres.url == "postgresql://u@db/p" and on_postgres.db_path is None
    with pytest.raises(ValueError, match="sqlite"):
        StatisticsStore.from_settings(Settings(database_url="mysql://u@db/p"))


def test_arrow_to_sample_types_and_null_masks() -> None:
    data = pa.table(
        {
            "i": pa.array([1, None, 3], pa.int32()),
            "f": pa.array([1.5, None, float("nan")]),
            "d": pa.array([dt.date(2024, 1, 2), None, dt.date(2024, 3, 1)]),
            "ts": pa.array([dt.datetime(2024, 1, 1, 12), None, None], pa.timestamp("us", tz="UTC")),
            "s": pa.array(["a", None, "c"]),
            "b": pa.array([True, None, False]),
            "dec": pa.array([None, Decimal("1.00"), Decimal("2.00")], pa.decimal128(5, 2)),
            "nested": pa.array([[1], [2], None]),
        }
    )
    sample = sample_from_arrow("t", 100, data)
    assert sample.size == 3 and sample.table_rows == 100.0
    assert "nested" not in sample.values  # the estimator cannot read it
    expected_dtypes = {
        "i": "int64",
        "f": "float64",
        "d": "datetime64[D]",
        "ts": "datetime64[us]",
        "s": "object",
        "b": "bool",
        "dec": "float64",
    }
    assert {k: str(v.dtype) for k, v in sample.values.items()} == expected_dtypes
    assert sample.nulls["i"].tolist() == [False, True, False]
    assert sample.nulls["f"].tolist() == [False, True, False]  # NaN is a value, not NULL
    assert sample.values["d"][2] == np.datetime64("2024-03-01")
    assert sample.values["ts"][0] == np.datetime64("2024-01-01T12:00:00")
    assert sample.values["s"].tolist()[::2] == ["a", "c"]
    assert sample.values["dec"].tolist()[1:] == [1.0, 2.0]


# ---------------------------------------------------------------- resolve_catalog


def test_a_catalog_without_refs_is_untouched_and_never_opens_the_store(tmp_path: Path) -> None:
    store = StatisticsStore(tmp_path / "db" / "s.db", tmp_path / "samples")
    catalog = {"tables": {"t": {"columns": ["a"], "row_count": 5}}}
    assert resolve_catalog(catalog, store) == (catalog, {})
    assert resolve_catalog(None, store) == (None, {})
    assert not (tmp_path / "db").exists()


def test_refs_become_stored_statistics_and_samples(store: StatisticsStore) -> None:
    save(store, "lineitem", 10)
    save(store, "lineitem", 20)
    catalog = {
        "tables": {
            "l": {"ref": "lineitem"},
            "old": {"ref": "lineitem", "version": 1, "indexes": [{"name": "i", "columns": ["a"]}]},
            "inline": {"columns": ["x"], "row_count": 3},
        }
    }
    resolved, samples = resolve_catalog(catalog, store)
    assert resolved is not None
    tables = resolved["tables"]
    assert tables["l"]["row_count"] == 20 and tables["old"]["row_count"] == 10
    assert set(tables["l"]) == {"columns", "row_count", "column_stats", "containers"}
    assert tables["old"]["indexes"] == [{"name": "i", "columns": ["a"]}]  # the caller's keys are kept
    assert tables["inline"] == {"columns": ["x"], "row_count": 3}
    assert set(samples) == {"l", "old"}  # keyed by the name the query uses
    assert samples["l"].table == "l" and samples["l"].table_rows == 20 and samples["l"].size == 3
    assert catalog["tables"]["l"] == {"ref": "lineitem"}  # the request is not mutated
    json.dumps(resolved)


def test_an_unknown_ref_names_it_and_the_tables_that_exist(store: StatisticsStore) -> None:
    save(store, "orders", 10)
    with pytest.raises(InputError) as info:
        resolve_catalog({"tables": {"l": {"ref": "lineitem"}}}, store)
    err = info.value
    assert err.code == "unknown_table" and err.path == "$.catalog.tables.l.ref"
    assert "lineitem" in err.message and "orders" in err.message
    assert err.detail == {"ref": "lineitem", "tables": ["orders"]}


def test_an_unknown_version_lists_the_versions(store: StatisticsStore) -> None:
    save(store, "orders", 10)
    with pytest.raises(InputError) as info:
        resolve_catalog({"tables": {"o": {"ref": "orders", "version": 7}}}, store)
    assert info.value.code == "unknown_version" and info.value.detail["versions"] == [1]


@pytest.mark.parametrize(
    ("entry", "path"),
    [({"ref": 3}, "$.catalog.tables.o.ref"), ({"ref": "orders", "version": "2"}, "$.catalog.tables.o.version")],
)
def test_malformed_refs(store: StatisticsStore, entry: dict[str, Any], path: str) -> None:
    with pytest.raises(InputError) as info:
        resolve_catalog({"tables": {"o": entry}}, store)
    assert info.value.path == path


def test_refs_without_a_store_are_refused() -> None:
    with pytest.raises(InputError) as info:
        resolve_catalog({"tables": {"o": {"ref": "orders"}}}, None)
    assert info.value.code == "statistics_unavailable"
