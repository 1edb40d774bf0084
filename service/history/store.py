"""Where records live: SQLite or PostgreSQL (``service.database``), written in batches, read for the API.

The schema is ``service.database.schema``'s; the store applies it on first use.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from service.database import MIGRATIONS, Backend, apply_migrations, backend_from_url, schema_version
from service.database.pool import ConnectionPool
from service.deep_json import loads_at_any_depth
from service.history.record import ROW_OVERHEAD, SOURCE, Record, compress, decompress
from service.history.totals import AGGREGATE, ORDER, group, record_savings
from service.settings import Settings


@dataclass(frozen=True, slots=True)
class Filters:
    """What the read API narrows by; dates are inclusive UTC days."""

    pipeline: str | None = None
    task: str | None = None
    date_from: date | None = None
    date_to: date | None = None

    def where(self, alias: str = "") -> tuple[str, list[Any]]:
        prefix = f"{alias}." if alias else ""
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (("pipeline", self.pipeline), ("task", self.task)):
            if value is not None:
                clauses.append(f"{prefix}{column} = ?")
                params.append(value)
        if self.date_from is not None:
            clauses.append(f"{prefix}day >= ?")
            params.append(self.date_from.isoformat())
        if self.date_to is not None:
            clauses.append(f"{prefix}day <= ?")
            params.append(self.date_to.isoformat())
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


_SUMMARY_COLUMNS = (
    "id, created_at, day, pipeline, task, run, input_form, mode, cost_before, cost_after, saved, savings, "
    "pushed, kept, blocked, sources, model_version, statistics_version, duration_ms, cost_baseline"
)
_INSERT = (
    f"INSERT INTO optimizations ({_SUMMARY_COLUMNS}, request, response, request_z, response_z, stored_bytes) "
    f"VALUES ({', '.join(['?'] * 25)})"
)
#: The persistent counters (``history_counters``); migration 4 created their rows.
COUNTERS = ("recorded", "dropped", "failed", "timed_out", "expired")
_INSERT_TALLY = "INSERT INTO optimization_tallies (optimization_id, kind, name, n) VALUES (?, ?, ?, ?)"


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    return str(value)


class HistoryStore:
    """Records in SQLite or PostgreSQL; safe from any thread.

    Connections come from a pool (``service.database.pool``): the writer thread and the requests that read
    feedback share a few, each for one transaction.
    """

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._migrated = False
        self._lock = threading.Lock()
        self._pool = ConnectionPool(backend)

    @classmethod
    def from_url(cls, url: str) -> HistoryStore:
        """``sqlite:///path`` or ``postgresql://...`` (``postgres://`` and ``postgresql+psycopg://`` too)."""
        return cls(backend_from_url(url))

    @classmethod
    def from_settings(cls, settings: Settings) -> HistoryStore:
        return cls.from_url(settings.database_url or f"sqlite:///{(settings.data_dir / 'pushdown.db').as_posix()}")

    @property
    def backend(self) -> str:
        return self._backend.name

    # ------------------------------------------------------------ schema

    def migrate(self, upto: int | None = None) -> int:
        """Apply the migrations not yet applied (up to ``upto``); returns the schema version now in place."""
        return apply_migrations(self._backend, MIGRATIONS, upto)

    def schema_version(self) -> int:
        return schema_version(self._backend)

    @contextlib.contextmanager
    def _connect_raw(self) -> Iterator[Any]:
        """A pooled connection inside a transaction: committed on success, rolled back and closed on error."""
        with self._pool.connection() as con:
            self._backend.begin(con)
            yield con
            self._backend.commit(con)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[Any]:
        if not self._migrated:
            with self._lock:
                migrated = self._migrated
            if not migrated:
                self.migrate()
                self._migrated = True
        with self._connect_raw() as con:
            yield con

    def close(self) -> None:
        """Close every connection, idle or in use (later calls open new ones)."""
        self._pool.close()

    def _query(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._connect() as con:
            cur = con.cursor()
            cur.execute(self._backend.sql(statement), tuple(params))
            return list(cur.fetchall())

    # ------------------------------------------------------------ writes

    def add_many(self, records: Sequence[Record], counts: Mapping[str, int] | None = None) -> int:
        """Write the records, and add ``recorded`` and the given ``counts`` to the counters, in one transaction;
        all or none. Bodies are stored compressed; returns the bytes stored."""
        counts = {name: n for name, n in (counts or {}).items() if n}
        if records:
            counts["recorded"] = counts.get("recorded", 0) + len(records)
        if not counts:
            return 0
        rows = [self._row(r) for r in records]
        tallies = [(r.id, kind, name, n) for r in records for kind, name, n in r.tallies]
        with self._connect() as con:
            cur = con.cursor()
            if rows:
                cur.executemany(self._backend.sql(_INSERT), rows)
            if tallies:
                cur.executemany(self._backend.sql(_INSERT_TALLY), tallies)
            self._add_counts(cur, counts)
        return sum(row[-1] for row in rows)

    def add(self, record: Record) -> None:
        self.add_many([record])

    def add_counts(self, counts: Mapping[str, int]) -> None:
        """Add to the persistent counters (``dropped``, ``failed``, ...) in a transaction of their own."""
        self.add_many([], counts)

    def _row(self, r: Record) -> tuple[Any, ...]:
        request_z, response_z = compress(r.request_json), compress(r.response_json)
        return (
            r.id,
            self._backend.timestamp(r.created_at),
            r.day,
            r.pipeline,
            r.task,
            r.run,
            r.input_form,
            r.mode,
            r.cost_before,
            r.cost_after,
            r.saved,
            r.savings,
            r.pushed,
            r.kept,
            r.blocked,
            json.dumps(r.sources, sort_keys=True),
            r.model_version,
            None if r.statistics_version is None else json.dumps(r.statistics_version, sort_keys=True),
            r.duration_ms,
            r.cost_baseline,
            "",  # request and response: the text columns of rows stored before compression
            "",
            request_z,
            response_z,
            len(request_z) + len(response_z) + ROW_OVERHEAD,
        )

    def _add_counts(self, cur: Any, counts: Mapping[str, int]) -> None:
        unknown = set(counts) - set(COUNTERS)
        if unknown:
            raise ValueError(f"no history counter {sorted(unknown)}; counters: {', '.join(COUNTERS)}")
        cur.executemany(
            self._backend.sql("UPDATE history_counters SET value = value + ? WHERE name = ?"),
            [(n, name) for name, n in counts.items()],
        )

    def _stored_bytes(self, cur: Any) -> int:
        cur.execute("SELECT COALESCE(SUM(stored_bytes), 0) FROM optimizations")
        return int(cur.fetchone()[0])

    def counters(self) -> dict[str, int]:
        """Since the history began (persisted, so across restarts): recorded, dropped, failed, timed_out,
        expired; and ``stored_bytes``, what the kept records take."""
        values = {name: int(value) for name, value in self._query("SELECT name, value FROM history_counters")}
        stored = self._query("SELECT COALESCE(SUM(stored_bytes), 0), COUNT(*) FROM optimizations")[0]
        return {
            **{name: values.get(name, 0) for name in COUNTERS},
            "stored_bytes": int(stored[0]),
            "kept": int(stored[1]),
        }

    # ------------------------------------------------------------ retention

    def enforce_retention(self, max_age: timedelta | None, max_bytes: int | None, now: datetime | None = None) -> int:
        """Delete records older than ``max_age``, then the oldest beyond ``max_bytes`` stored; how many went.

        Their tallies go with them (ON DELETE CASCADE); the count is added to the ``expired`` counter.
        """
        expired = 0
        with self._connect() as con:
            cur = con.cursor()
            if max_age is not None:
                cutoff = (now or datetime.now(UTC)) - max_age
                cur.execute(
                    self._backend.sql("DELETE FROM optimizations WHERE created_at < ?"),
                    (self._backend.timestamp(cutoff),),
                )
                expired += max(cur.rowcount, 0)
            if max_bytes is not None and self._stored_bytes(cur) > max_bytes:  # the ranking sorts every row
                cur.execute(
                    self._backend.sql(
                        "DELETE FROM optimizations WHERE id IN (SELECT id FROM (SELECT id, SUM(stored_bytes) "
                        "OVER (ORDER BY created_at DESC, id DESC) AS newer FROM optimizations) AS ranked "
                        "WHERE newer > ?)"
                    ),
                    (max_bytes,),
                )
                expired += max(cur.rowcount, 0)
            if expired:
                self._add_counts(cur, {"expired": expired})
        return expired

    # ------------------------------------------------------------ reads

    def list(self, filters: Filters, limit: int = 50, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
        """The newest first, one page of summaries, and how many match in all."""
        where, params = filters.where()
        total = self._query(f"SELECT COUNT(*) FROM optimizations{where}", params)[0][0]
        rows = self._query(
            f"SELECT {_SUMMARY_COLUMNS} FROM optimizations{where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        return [self._summary(row) for row in rows], int(total)

    def get(self, record_id: str) -> dict[str, Any] | None:
        rows = self._query(
            f"SELECT {_SUMMARY_COLUMNS}, request, response, request_z, response_z FROM optimizations WHERE id = ?",
            [record_id],
        )
        if not rows:
            return None
        *summary, request, response, request_z, response_z = rows[0]
        record = self._summary(summary)
        record["request"] = loads_at_any_depth(request if request_z is None else decompress(request_z))
        record["response"] = loads_at_any_depth(response if response_z is None else decompress(response_z))
        tallies = self._query("SELECT kind, name, n FROM optimization_tallies WHERE optimization_id = ?", [record_id])
        record["reasons"] = [
            {"action": kind, "reason": name, "count": int(n)} for kind, name, n in sorted(tallies) if kind != SOURCE
        ]
        return record

    def savings(self, filters: Filters, top: int = 10) -> dict[str, Any]:
        """Totals, series by day, pipeline and task, the top kept/blocked reasons and the estimate sources."""
        where, params = filters.where()
        agg = AGGREGATE
        totals = group(self._query(f"SELECT {agg} FROM optimizations{where}", params)[0])
        by_day = [
            {"day": row[0], **group(row[1:])}
            for row in self._query(f"SELECT day, {agg} FROM optimizations{where} GROUP BY day ORDER BY day", params)
        ]
        by_pipeline = [
            {"pipeline": row[0], **group(row[1:])}
            for row in self._query(
                f"SELECT pipeline, {agg} FROM optimizations{where} GROUP BY pipeline ORDER BY {ORDER}, pipeline",
                params,
            )
        ]
        by_task = [
            {"pipeline": row[0], "task": row[1], **group(row[2:])}
            for row in self._query(
                f"SELECT pipeline, task, {agg} FROM optimizations{where} GROUP BY pipeline, task "
                f"ORDER BY {ORDER}, pipeline, task",
                params,
            )
        ]
        owhere, oparams = filters.where("o")
        joined = "FROM optimization_tallies t JOIN optimizations o ON o.id = t.optimization_id"
        kinds = " AND " if owhere else " WHERE "
        reasons = [
            {"action": kind, "reason": name, "count": int(n), "requests": int(requests)}
            for kind, name, n, requests in self._query(
                f"SELECT t.kind, t.name, SUM(t.n), COUNT(*) {joined}{owhere}{kinds}t.kind IN ('kept', 'blocked') "
                "GROUP BY t.kind, t.name ORDER BY SUM(t.n) DESC, t.kind, t.name LIMIT ?",
                [*oparams, top],
            )
        ]
        sources = [
            {"source": name, "count": int(n)}
            for name, n in self._query(
                f"SELECT t.name, SUM(t.n) {joined}{owhere}{kinds}t.kind = '{SOURCE}' "
                "GROUP BY t.name ORDER BY SUM(t.n) DESC, t.name",
                oparams,
            )
        ]
        pipelines = [
            row[0]
            for row in self._query(
                "SELECT DISTINCT pipeline FROM optimizations WHERE pipeline IS NOT NULL ORDER BY pipeline"
            )
        ]
        return {
            "totals": totals,
            "by_day": by_day,
            "by_pipeline": by_pipeline,
            "by_task": by_task,
            "reasons": reasons,
            "sources": sources,
            "pipelines": pipelines,
        }

    @staticmethod
    def _summary(row: Sequence[Any]) -> dict[str, Any]:
        names = [c.strip() for c in _SUMMARY_COLUMNS.split(",")]
        record = dict(zip(names, row, strict=True))
        record["created_at"] = _iso(record["created_at"])
        record["sources"] = json.loads(record["sources"] or "{}")
        version = record["statistics_version"]
        record["statistics_version"] = None if version is None else json.loads(version)
        return record_savings(record)
