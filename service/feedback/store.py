"""Actual rows stored beside the optimization history: one feedback per request, and what it teaches.

Two tables in the history's database (SQLite or PostgreSQL), both tied to ``optimizations`` with ``ON DELETE
CASCADE``, so the history's retention removes feedback with its record:

- ``optimization_feedback``: the nodes a runner posted for a request (a second post replaces the first);
- ``feedback_observations``: per scan with filters, the observed selectivity of its predicates, keyed by table and
  normalized predicate (and by pipeline task and predicate template), which the next ``/optimize`` reads.

The tables come from the shared schema (service/database/schema.py, migration 5), applied on first use;
``feedback_versions`` (migration 9) holds a version per table that triggers bump on every change of its
observations, which is all the request cache's probe reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from service.deep_json import loads_at_any_depth
from service.history import HistoryStore
from service.history.record import decompress


@dataclass(frozen=True, slots=True)
class Observation:
    """One scan's predicates as observed: ``rows_out`` of ``rows_in`` rows kept."""

    node_id: str
    table: str
    predicate: str
    template: str
    rows_in: float
    rows_out: float
    table_rows: float | None = None
    statistics_version: str | None = None
    pipeline: str | None = None
    task: str | None = None
    observed_at: datetime | None = None

    @property
    def selectivity(self) -> float:
        return min(1.0, self.rows_out / self.rows_in) if self.rows_in > 0 else 0.0


class FeedbackStore:
    """Feedback in the history's database; every method is safe from any thread."""

    def __init__(self, history: HistoryStore) -> None:
        self.history = history

    def _query(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.history._connect() as con:  # migrates the shared schema on first use
            cur = con.cursor()
            cur.execute(self.history._backend.sql(statement), tuple(params))
            return list(cur.fetchall())

    # ------------------------------------------------------------ writes

    def replace(self, request_id: str, nodes: Sequence[dict[str, Any]], observations: Iterable[Observation]) -> None:
        """Store a request's feedback and observations, replacing any earlier post, in one transaction."""
        backend = self.history._backend
        now = datetime.now(UTC)
        rows = [
            (
                request_id,
                o.node_id,
                o.table,
                o.predicate,
                o.template,
                o.pipeline,
                o.task,
                o.rows_in,
                o.rows_out,
                o.table_rows,
                o.statistics_version,
                backend.timestamp(now),
            )
            for o in observations
        ]
        with self.history._connect() as con:
            cur = con.cursor()
            cur.execute(backend.sql("DELETE FROM feedback_observations WHERE optimization_id = ?"), (request_id,))
            cur.execute(backend.sql("DELETE FROM optimization_feedback WHERE optimization_id = ?"), (request_id,))
            cur.execute(
                backend.sql("INSERT INTO optimization_feedback (optimization_id, received_at, nodes) VALUES (?, ?, ?)"),
                (request_id, backend.timestamp(now), json.dumps(list(nodes), separators=(",", ":"))),
            )
            if rows:
                cur.executemany(
                    backend.sql(
                        "INSERT INTO feedback_observations (optimization_id, node_id, table_name, predicate, template,"
                        " pipeline, task, rows_in, rows_out, table_rows, statistics_version, observed_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    ),
                    rows,
                )

    # ------------------------------------------------------------ reads

    def state(self) -> dict[str, int]:
        """Per table, a version that changes with every post, retention delete or replacement of its
        observations, by any process (the request cache's probe, every second). Triggers keep it
        (``feedback_versions``, migration 9): a read of one row per table, however many observations there are."""
        rows = self._query("SELECT table_name, version FROM feedback_versions")
        return {str(r[0]): int(r[1]) for r in rows}

    def get(self, request_id: str) -> dict[str, Any] | None:
        """``{"received_at", "nodes"}`` of a request's feedback, or None."""
        rows = self._query(
            "SELECT received_at, nodes FROM optimization_feedback WHERE optimization_id = ?", [request_id]
        )
        if not rows:
            return None
        return {"received_at": _iso(rows[0][0]), "nodes": json.loads(rows[0][1])}

    def observations(
        self, tables: Sequence[str], pipeline: str | None = None, task: str | None = None, limit: int = 500
    ) -> list[Observation]:
        """The newest observations on ``tables``, plus those of the same pipeline task; newest first."""
        if not tables:
            return []
        marks = ", ".join("?" for _ in tables)
        rows = self._query(
            "SELECT node_id, table_name, predicate, template, rows_in, rows_out, table_rows, statistics_version,"
            f" pipeline, task, observed_at FROM feedback_observations WHERE table_name IN ({marks})"
            " ORDER BY observed_at DESC LIMIT ?",
            [*[t.lower() for t in tables], limit],
        )
        return [
            Observation(str(r[0]), r[1], r[2], r[3], float(r[4]), float(r[5]), r[6], r[7], r[8], r[9], _datetime(r[10]))
            for r in rows
        ]

    def task_runs(self, pipeline: str, task: str, limit: int = 200) -> list[dict[str, Any]]:
        """The recorded runs of one pipeline task that have feedback, oldest first: request, run, time, answer."""
        rows = self._query(
            "SELECT o.id, o.run, o.created_at, o.response, o.response_z, f.nodes FROM optimizations o"
            " JOIN optimization_feedback f ON f.optimization_id = o.id"
            " WHERE o.pipeline = ? AND o.task = ? ORDER BY o.created_at DESC LIMIT ?",
            [pipeline, task, limit],
        )
        runs = [
            {
                "id": r[0],
                "run": r[1],
                "created_at": _iso(r[2]),
                # older rows: uncompressed; an answer may be nested deeper than json goes
                "response": loads_at_any_depth(r[3] if r[4] is None else decompress(r[4])),
                "nodes": json.loads(r[5]),
            }
            for r in rows
        ]
        return runs[::-1]


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    return str(value)


def _datetime(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    return datetime.fromisoformat(str(value))
