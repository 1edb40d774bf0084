"""Analyze jobs' state in the service's database, so every worker and replica on it answers ``GET /jobs/{id}``.

The process that accepted a job runs it (``service.jobs.JobRunner``) and writes each change here; any process
reads it. The table is ``analyze_jobs`` (``service.database.schema``, migrations 6 and 8). A process that dies
while its job runs leaves that job ``running``; each job records its process (``owner``, ``host:pid``), so the
next start-up (``fail_abandoned``) marks it failed with the reason: on this host when that process is gone, on
another host when the job has not changed for ``STALE_AFTER_S`` (that process cannot be asked from here).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import socket
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
#: A job owned by another host counts as abandoned when it has not changed for this long (seconds): a running
#: analyze updates its job at every stage, so an hour without one means its process is gone.
STALE_AFTER_S = 3600.0


def this_process() -> str:
    """``host:pid`` of this process, the ``owner`` of the jobs it accepts."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _alive(pid: int) -> bool:
    """Whether a process with ``pid`` runs on this host (it may be another that reused the number: then kept)."""
    if pid == os.getpid():
        return False  # this process is starting: it runs no job yet, so the number was reused from a dead one
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def abandoned_reason(owner: str | None, idle_s: float, stale_after_s: float = STALE_AFTER_S) -> str | None:
    """Why an unfinished job's process is gone, or None while it may still run it.

    >>> abandoned_reason("elsewhere:1", 60.0) is None
    True
    >>> abandoned_reason("elsewhere:1", 7200.0)  # doctest: +ELLIPSIS
    'the job has not changed for 120 min; ... on elsewhere is presumed stopped; run it again'
    """
    host, _, pid = (owner or "").rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        if _alive(int(pid)):
            return None
        return f"the service process that ran this job (pid {pid} on {host}) stopped before it finished; run it again"
    if idle_s < stale_after_s:
        return None
    where = f" on {host}" if host else ""
    return (
        f"the job has not changed for {idle_s / 60:.0f} min; the service process that ran it{where} is presumed "
        "stopped; run it again"
    )


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
        columns = ", ".join((*_COLUMNS, "updated_at", "owner"))
        marks = ", ".join("?" * (len(_COLUMNS) + 2))
        values = tuple(self._value(c, getattr(job, c)) for c in _COLUMNS)
        with self._transaction() as cursor:
            self._execute(
                cursor,
                f"INSERT INTO analyze_jobs ({columns}) VALUES ({marks})",
                (*values, self._now(), this_process()),
            )
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

    def fail_abandoned(self, stale_after_s: float = STALE_AFTER_S) -> list[Job]:
        """Mark failed the ``queued``/``running`` jobs whose process is gone (``abandoned_reason``); returns them."""
        if not self._exists():
            return []
        now = dt.datetime.now(dt.UTC)
        with self._transaction() as cursor:
            rows = self._execute(
                cursor, "SELECT id, owner, updated_at FROM analyze_jobs WHERE state IN ('queued', 'running')"
            ).fetchall()
            failed = []
            for job_id, owner, updated_at in rows:
                changed = dt.datetime.fromisoformat(updated_at) if isinstance(updated_at, str) else updated_at
                reason = abandoned_reason(owner, (now - changed).total_seconds(), stale_after_s)
                if reason is None:
                    continue
                done = self._execute(
                    cursor,
                    "UPDATE analyze_jobs SET state = 'failed', error = ?, finished_at = ?, updated_at = ? "
                    "WHERE id = ? AND state IN ('queued', 'running')",
                    (reason, self._backend.timestamp(now), self._backend.timestamp(now), job_id),
                )
                if done.rowcount == 1:
                    failed.append(str(job_id))
        return [job for job in map(self.get, failed) if job is not None]
