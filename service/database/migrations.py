"""Applying the schema's migrations: once per database, in order, under a lock, remembered in a table.

Every store calls ``apply_migrations`` before its first use; several processes starting together (workers,
replicas) serialize on the database's write lock, so each migration runs once and the others see it applied.
``schema_migrations`` lists what was applied and when. Databases made before it existed kept that list in
``history_migrations``: its rows are taken over on first contact.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from service.database.backends import Backend

logger = logging.getLogger(__name__)

VERSIONS_TABLE = "schema_migrations"
_LEGACY_VERSIONS_TABLE = "history_migrations"
_LOCK = "pushdown.schema"


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the schema: the statements for SQLite and for PostgreSQL, run in one transaction."""

    version: int
    description: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]

    @classmethod
    def portable(cls, version: int, description: str, *statements: str) -> Migration:
        """A step whose statements are the same on both databases."""
        return cls(version, description, sqlite=statements, postgres=statements)


def check_order(migrations: Sequence[Migration]) -> None:
    """Versions must be 1, 2, 3, ... with no gap or repeat: a mistake here would skip or repeat a step.

    >>> check_order([Migration.portable(1, "a"), Migration.portable(3, "b")])
    Traceback (most recent call last):
    ...
    ValueError: migration versions must be 1..2 in order, got [1, 3]
    """
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migration versions must be 1..{len(versions)} in order, got {versions}")


def apply_migrations(backend: Backend, migrations: Sequence[Migration], upto: int | None = None) -> int:
    """Apply the migrations not yet applied (up to ``upto``); the schema version now in place."""
    check_order(migrations)
    con = backend.open()
    try:
        cur = con.cursor()
        backend.begin(con)
        try:
            backend.lock_for_write(cur, _LOCK)
            applied = _applied_versions(backend, cur)
            for migration in migrations:
                if migration.version in applied or (upto is not None and migration.version > upto):
                    continue
                for statement in migration.sqlite if backend.flavor == "sqlite" else migration.postgres:
                    cur.execute(statement)
                cur.execute(
                    backend.sql(f"INSERT INTO {VERSIONS_TABLE} (version, description, applied_at) VALUES (?, ?, ?)"),
                    (migration.version, migration.description, datetime.now(UTC).isoformat()),
                )
                applied.add(migration.version)
                logger.info("database schema: applied migration %d (%s)", migration.version, migration.description)
            backend.commit(con)
        except BaseException:
            with contextlib.suppress(Exception):
                backend.rollback(con)
            raise
        return max(applied, default=0)
    finally:
        with contextlib.suppress(Exception):
            con.close()


def schema_version(backend: Backend) -> int:
    """The newest migration applied to the database (0 for a database never migrated)."""
    con = backend.open()
    try:
        cur = con.cursor()
        if not backend.table_exists(cur, VERSIONS_TABLE):
            return 0
        cur.execute(f"SELECT MAX(version) FROM {VERSIONS_TABLE}")
        return int(cur.fetchone()[0] or 0)
    finally:
        with contextlib.suppress(Exception):
            backend.rollback(con)
        con.close()


def _applied_versions(backend: Backend, cur: Any) -> set[int]:
    """The versions applied so far; creates the table, taking over a legacy ``history_migrations`` list."""
    if not backend.table_exists(cur, VERSIONS_TABLE):
        cur.execute(
            f"CREATE TABLE {VERSIONS_TABLE} "
            "(version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        if backend.table_exists(cur, _LEGACY_VERSIONS_TABLE):
            cur.execute(
                f"INSERT INTO {VERSIONS_TABLE} (version, description, applied_at) "
                f"SELECT version, description, applied_at FROM {_LEGACY_VERSIONS_TABLE}"
            )
    cur.execute(f"SELECT version FROM {VERSIONS_TABLE}")
    return {int(row[0]) for row in cur.fetchall()}
