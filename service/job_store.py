"""Analyze jobs' state in the service's database, so every worker and replica on it answers ``GET /jobs/{id}``.

The process that accepted a job runs it (``service.jobs.JobRunner``) and writes each change here; any process
reads it. The table is ``analyze_jobs`` (``service.database.schema``, migration 6). A process that dies while
its job runs leaves that job ``running``: its state says when it was last updated (``updated_at``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from service.database import MIGRATIONS, PostgresBackend, SQLiteBackend, apply_migrations, backend_from_url
from service.jobs import MAX_FINISHED_JOBS, Job

if TYPE_CHECKING:
    from service.settings import Settings

#: Job fields as columns, in this order (``result`` is JSON text; timestamps are the backend's).
_COLUMNS = tuple(f.name for f in fields(Job))
_TIMESTAMPS = frozenset({"created_at", "started_at", "finished_at"})
_FINISHED = "('succeeded', 'failed')"


def _iso(value: Any) -> str | None:
    """A timestamp as the job's wire form (ISO 8601, UTC, seconds), from SQLite's text or PostgreSQL's value.

    >>> _iso("2026-11-23T18:00:00.000000+00:00"), _iso(None)
    ('2026-11-23T18:00:00+00:00', None)
    """
    if value is None:
        return None
    moment = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.astimezone(dt.UTC).isoformat(timespec="seconds")


class DatabaseJobStates:
    """``JobStates`` over SQLite or PostgreSQL; one short connection per call, safe from any thread."""

    def __init__(self, backend: SQLiteBackend | PostgresBackend) -> None:
        self._backend = backend
        self._ready = False

    @classmethod
    def from_settings(cls, settings: Settings) -> DatabaseJobStates:
        """The database history and statistics use (``PUSHDOWN_DATABASE_URL``, default SQLite under data_dir)."""
        return cls(backend_from_url(settings.database_url or ""))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        con = self._backend.open()
        try:
            if not self._ready:
                apply_migrations(self._backend, MIGRATIONS)
                self._ready = True
            cursor = con.cursor()
            self._backend.begin(con)
            try:
                yield cursor
                self._backend.commit(con)
            except BaseException:
                self._backend.rollback(con)
                raise
        finally:
            con.close()

    def _execute(self, cursor: Any, statement: str, params: tuple[Any, ...] = ()) -> Any:
        cursor.execute(self._backend.sql(statement), params)
        return cursor

    def _value(self, column: str, value: Any) -> Any:
        if column == "result":
            return None if value is None else json.dumps(value)
        if column in _TIMESTAMPS and value is not None:
            return self._backend.timestamp(dt.datetime.fromisoformat(value))
        return value

    def _job(self, row: tuple[Any, ...]) -> Job:
        values = dict(zip(_COLUMNS, row, strict=True))
        values["result"] = None if values["result"] is None else json.loads(values["result"])
        for column in _TIMESTAMPS:
            values[column] = _iso(values[column])
        return Job(**values)

    def _now(self) -> Any:
        return self._backend.timestamp(dt.datetime.now(dt.UTC))

    def add(self, job: Job) -> None:
        """Insert ``job``; forget the oldest finished jobs beyond ``MAX_FINISHED_JOBS``."""
        columns = ", ".join((*_COLUMNS, "updated_at"))
        marks = ", ".join("?" * (len(_COLUMNS) + 1))
        values = tuple(self._value(c, getattr(job, c)) for c in _COLUMNS)
        with self._transaction() as cursor:
            self._execute(cursor, f"INSERT INTO analyze_jobs ({columns}) VALUES ({marks})", (*values, self._now()))
            self._execute(
                cursor,
                f"DELETE FROM analyze_jobs WHERE state IN {_FINISHED} AND id NOT IN (SELECT id FROM analyze_jobs "
                f"WHERE state IN {_FINISHED} ORDER BY finished_at DESC, id LIMIT ?)",
                (MAX_FINISHED_JOBS,),
            )

    def update(self, job_id: str, **changes: Any) -> None:
        unknown = set(changes) - set(_COLUMNS) | ({"id"} & set(changes))
        if unknown:
            raise ValueError(f"not a job field to update: {sorted(unknown)}")
        assignments = ", ".join(f"{column} = ?" for column in (*changes, "updated_at"))
        values = tuple(self._value(c, v) for c, v in changes.items())
        with self._transaction() as cursor:
            self._execute(cursor, f"UPDATE analyze_jobs SET {assignments} WHERE id = ?", (*values, self._now(), job_id))

    def _exists(self) -> bool:
        """False while an SQLite file was never created: reading then needs no file (nor creates one)."""
        return not isinstance(self._backend, SQLiteBackend) or self._backend.path.exists()

    def get(self, job_id: str) -> Job | None:
        if not self._exists():
            return None
        with self._transaction() as cursor:
            row = self._execute(
                cursor, f"SELECT {', '.join(_COLUMNS)} FROM analyze_jobs WHERE id = ?", (job_id,)
            ).fetchone()
        return None if row is None else self._job(tuple(row))

    def jobs(self) -> list[Job]:
        """Every job remembered, oldest first."""
        if not self._exists():
            return []
        with self._transaction() as cursor:
            rows = self._execute(cursor, f"SELECT {', '.join(_COLUMNS)} FROM analyze_jobs ORDER BY created_at, id")
            return [self._job(tuple(row)) for row in rows.fetchall()]

    def counts(self) -> dict[str, int]:
        if not self._exists():
            return {}
        with self._transaction() as cursor:
            rows = self._execute(cursor, "SELECT state, COUNT(*) FROM analyze_jobs GROUP BY state").fetchall()
        return {str(state): int(n) for state, n in rows}
