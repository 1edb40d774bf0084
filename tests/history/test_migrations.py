"""The shared schema (service/database): one list of migrations for every store, applied once per database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from service.database import MIGRATIONS, Migration, apply_migrations, backend_from_url, schema_version
from service.database.migrations import check_order
from service.statistics import StatisticsStore

LATEST = MIGRATIONS[-1].version


def test_versions_are_consecutive_and_a_gap_is_refused() -> None:
    check_order(MIGRATIONS)
    with pytest.raises(ValueError, match="in order"):
        apply_migrations(backend_from_url("sqlite:///unused.db"), [Migration.portable(2, "no first step")])


def test_a_new_migration_is_applied_once_on_both_databases(store_url: str) -> None:
    backend = backend_from_url(store_url)
    assert apply_migrations(backend, MIGRATIONS) == LATEST
    extra = Migration.portable(LATEST + 1, "a table a later release adds", "CREATE TABLE later_notes (id TEXT)")
    assert apply_migrations(backend, (*MIGRATIONS, extra)) == LATEST + 1
    assert apply_migrations(backend, (*MIGRATIONS, extra)) == LATEST + 1  # again: nothing to do, no error
    assert schema_version(backend) == LATEST + 1
    con = backend.open()
    try:
        cur = con.cursor()
        assert backend.table_exists(cur, "later_notes") and backend.table_exists(cur, "table_versions")
    finally:
        con.close()


def test_a_database_from_before_the_shared_schema_is_taken_over(tmp_path: Path) -> None:
    """Version 2 history with its own ``history_migrations`` list and statistics tables made without migrations."""
    path = tmp_path / "pushdown.db"
    backend = backend_from_url(f"sqlite:///{path}")
    apply_migrations(backend, MIGRATIONS, upto=2)
    with sqlite3.connect(path) as con:
        con.execute("ALTER TABLE schema_migrations RENAME TO history_migrations")
        con.execute(
            "CREATE TABLE table_versions (name TEXT NOT NULL, version INTEGER NOT NULL, created_at TEXT NOT NULL, "
            "stats_json TEXT NOT NULL, sample_path TEXT, PRIMARY KEY (name, version))"
        )
        con.execute("CREATE TABLE current_versions (name TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        con.execute("INSERT INTO table_versions VALUES ('t', 1, '2026-01-01', '{\"row_count\": 5}', NULL)")
        con.execute("INSERT INTO current_versions VALUES ('t', 1)")
    store = StatisticsStore(path, tmp_path / "samples")
    current = store.get("t")
    assert current is not None and current.stats == {"row_count": 5}
    assert schema_version(backend) == LATEST
    with sqlite3.connect(path) as con:
        versions = [row[0] for row in con.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == list(range(1, LATEST + 1))  # 1 and 2 taken over, not applied twice
