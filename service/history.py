"""The optimization history: every ``/optimize`` answer kept, summarized for the dashboard, in full for drill-down.

Two parts:

- ``HistoryStore`` writes and reads records in SQLite (the embedded default, WAL mode, beside the statistics
  store in ``data_dir/pushdown.db``) or PostgreSQL (when ``PUSHDOWN_DATABASE_URL`` is a ``postgresql://`` URL).
  The service creates and migrates the schema itself, on first use, under a lock so that several workers
  starting together migrate once (``history_migrations`` lists what was applied).
- ``HistoryRecorder`` keeps recording off the request path: the route hands the answer to a bounded queue
  and returns; one writer thread turns queued answers into records and writes them in batches. A full queue
  drops the record, a failing store loses the batch; both are logged and counted (``status()``), and
  neither slows nor fails an optimization.

A record's ``day`` is its UTC date; date filters are inclusive UTC days.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import queue
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Protocol

from service.settings import Settings

logger = logging.getLogger(__name__)

ACTIONS = ("pushed", "kept", "blocked")
SOURCE = "source"  # tally kind of estimate sources, beside the three actions


# ---------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class Record:
    """One optimization as stored: the summary columns, the tallies and the full request and answer (JSON text)."""

    id: str
    created_at: datetime
    pipeline: str | None
    task: str | None
    run: str | None
    input_form: str
    mode: str | None
    cost_before: float
    cost_after: float
    savings: float
    pushed: int
    kept: int
    blocked: int
    sources: dict[str, int]
    model_version: str | None
    statistics_version: Any
    duration_ms: float | None
    request_json: str
    response_json: str
    #: (kind, name, count): kind is an action with a reason as name, or ``source`` with an estimate source.
    tallies: tuple[tuple[str, str, int], ...] = ()

    @property
    def day(self) -> str:
        return self.created_at.astimezone(UTC).date().isoformat()

    @property
    def saved(self) -> float:
        return self.cost_before - self.cost_after


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def input_form(request: dict[str, Any]) -> str:
    for form in ("sql", "substrait", "plan"):
        if request.get(form) is not None:
            return form
    return "plan"


def statistics_version(request: dict[str, Any], response: dict[str, Any]) -> Any:
    """The statistics the answer used: what the answer says, else the catalog's ``ref`` tables and versions."""
    for key in ("statistics_version", "statistics"):
        if response.get(key) is not None:
            return response[key]
    catalog = request.get("catalog")
    tables = catalog.get("tables") if isinstance(catalog, dict) else None
    if not isinstance(tables, dict):
        return None
    refs = {
        name: {"ref": entry["ref"], "version": entry.get("version", "current")}
        for name, entry in tables.items()
        if isinstance(entry, dict) and "ref" in entry
    }
    return refs or None


def build_record(
    request: dict[str, Any],
    response: dict[str, Any],
    *,
    request_json: str | None = None,
    response_json: str | None = None,
    duration_ms: float | None = None,
    created_at: datetime | None = None,
) -> Record:
    """The record of one answer. ``request`` is the body as the service read it (plan, sql or substrait, ...);
    ``request_json`` and ``response_json``, when given, are the texts as sent (else ``request`` and ``response``
    are serialized)."""
    context = response.get("context") or request.get("context") or {}
    context = context if isinstance(context, dict) else {}
    options = request.get("options") if isinstance(request.get("options"), dict) else {}
    cost = response.get("cost") or {}
    decisions = [d for d in response.get("decisions") or [] if isinstance(d, dict)]
    actions = Counter(str(d.get("action")) for d in decisions)
    reasons = Counter((str(d.get("action")), str(d.get("reason") or "unspecified")) for d in decisions)
    sources = Counter(str(e.get("source") or "unknown") for e in response.get("estimates") or [] if isinstance(e, dict))
    tallies = tuple((a, r, n) for (a, r), n in sorted(reasons.items())) + tuple(
        (SOURCE, s, n) for s, n in sorted(sources.items())
    )
    return Record(
        id=str(response.get("request_id") or ""),
        created_at=created_at or datetime.now(UTC),
        pipeline=_text(context.get("pipeline")),
        task=_text(context.get("task")),
        run=_text(context.get("run")),
        input_form=input_form(request),
        mode=_text(options.get("mode")) if options else None,
        cost_before=_number((cost.get("before") or {}).get("total")),
        cost_after=_number((cost.get("after") or {}).get("total")),
        savings=_number(cost.get("savings")),
        pushed=actions["pushed"],
        kept=actions["kept"],
        blocked=actions["blocked"],
        sources=dict(sources),
        model_version=_text(response.get("model_version")),
        statistics_version=statistics_version(request, response),
        duration_ms=duration_ms,
        request_json=request_json if request_json is not None else json.dumps(request, separators=(",", ":")),
        response_json=response_json if response_json is not None else json.dumps(response, separators=(",", ":")),
        tallies=tallies,
    )


# ---------------------------------------------------------------- plan trees for drill-down

_EXPLAIN_NODE = re.compile(r"  \[(?P<id>[^\s\]]+)(?: |\])")


def explain_tree(text: str, cost_nodes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The EXPLAIN text as a tree: ``{"id", "label", "rows_in", "rows_out", "k", "cost", "children"}`` per node.

    Nesting comes from the text's two-space indentation, numbers from the cost table (joined by node id).
    """
    by_id = {str(n.get("id")): n for n in cost_nodes if isinstance(n, dict)}
    roots: list[dict[str, Any]] = []
    stack: list[tuple[int, dict[str, Any]]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        body = line.strip()
        matches = list(_EXPLAIN_NODE.finditer(body))
        node_id = matches[-1].group("id") if matches else None
        label = body[: matches[-1].start()] if matches else body
        annotation = body[matches[-1].start() + 3 : -1] if matches else ""
        costs = by_id.get(node_id or "", {})
        node = {
            "id": node_id,
            "label": label,
            "annotation": annotation,
            "operator": costs.get("operator"),
            "rows_in": costs.get("rows_in"),
            "rows_out": costs.get("rows_out"),
            "k": costs.get("k"),
            "cost": costs.get("cost"),
            "children": [],
        }
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1]["children"] if stack else roots).append(node)
        stack.append((depth, node))
    return roots


# ---------------------------------------------------------------- store


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


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    description: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]


def _optimizations_table(timestamp: str) -> str:
    return f"""CREATE TABLE optimizations (
    id TEXT PRIMARY KEY,
    created_at {timestamp} NOT NULL,
    day TEXT NOT NULL,
    pipeline TEXT,
    task TEXT,
    run TEXT,
    input_form TEXT NOT NULL,
    mode TEXT,
    cost_before DOUBLE PRECISION NOT NULL,
    cost_after DOUBLE PRECISION NOT NULL,
    saved DOUBLE PRECISION NOT NULL,
    savings DOUBLE PRECISION NOT NULL,
    pushed INTEGER NOT NULL,
    kept INTEGER NOT NULL,
    blocked INTEGER NOT NULL,
    sources TEXT NOT NULL,
    model_version TEXT,
    statistics_version TEXT,
    duration_ms DOUBLE PRECISION,
    request TEXT NOT NULL,
    response TEXT NOT NULL
)"""


_TALLIES_TABLE = """CREATE TABLE optimization_tallies (
    optimization_id TEXT NOT NULL REFERENCES optimizations (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (optimization_id, kind, name)
)"""

_INDEXES = (
    "CREATE INDEX IF NOT EXISTS optimizations_created ON optimizations (created_at)",
    "CREATE INDEX IF NOT EXISTS optimizations_day ON optimizations (day)",
    "CREATE INDEX IF NOT EXISTS optimizations_pipeline_day ON optimizations (pipeline, task, day)",
    "CREATE INDEX IF NOT EXISTS optimization_tallies_kind ON optimization_tallies (kind, name)",
)

#: Applied in order, each in its own transaction; never edit one that shipped, add the next.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "optimizations and their tallies",
        sqlite=(_optimizations_table("TEXT"), _TALLIES_TABLE),
        postgres=(_optimizations_table("TIMESTAMPTZ"), _TALLIES_TABLE),
    ),
    Migration(2, "indexes for the dashboard's filters and series", sqlite=_INDEXES, postgres=_INDEXES),
)

_SUMMARY_COLUMNS = (
    "id, created_at, day, pipeline, task, run, input_form, mode, cost_before, cost_after, saved, savings, "
    "pushed, kept, blocked, sources, model_version, statistics_version, duration_ms"
)
_INSERT = (
    f"INSERT INTO optimizations ({_SUMMARY_COLUMNS}, request, response) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_TALLY = "INSERT INTO optimization_tallies (optimization_id, kind, name, n) VALUES (?, ?, ?, ?)"


class _Backend(Protocol):
    name: str
    flavor: str

    def open(self) -> Any: ...

    def begin(self, con: Any) -> None: ...

    def commit(self, con: Any) -> None: ...

    def rollback(self, con: Any) -> None: ...

    def sql(self, statement: str) -> str: ...

    def lock_for_migration(self, cursor: Any) -> None: ...

    def timestamp(self, value: datetime) -> Any: ...


class _SQLite:
    """WAL mode, so readers never wait for the writer; ``synchronous=NORMAL``: a commit survives a crash of the
    process (not of the machine) without an fsync per commit."""

    name = "sqlite"
    flavor = "sqlite"

    #: How long a connection waits for another one's lock before "database is locked".
    busy_timeout_s = 30.0

    def __init__(self, path: Path) -> None:
        self.path = path

    def _use_wal(self, con: Any) -> None:
        """Switch a new database to WAL. SQLite answers a concurrent switch with "database is locked" at once,
        without its busy handler (two processes creating the store together), so wait here as a busy handler
        would; once the file is in WAL mode the pragma is a no-op."""
        import sqlite3

        deadline = time.monotonic() + self.busy_timeout_s
        while True:
            try:
                con.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def open(self) -> Any:
        import sqlite3

        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
        self._use_wal(con)
        con.execute("PRAGMA foreign_keys=ON")
        con.execute("PRAGMA synchronous=NORMAL")
        return con

    def begin(self, con: Any) -> None:
        con.execute("BEGIN")

    def commit(self, con: Any) -> None:
        con.execute("COMMIT")

    def rollback(self, con: Any) -> None:
        if con.in_transaction:
            con.execute("ROLLBACK")

    def sql(self, statement: str) -> str:
        return statement

    def lock_for_migration(self, cursor: Any) -> None:
        cursor.execute("COMMIT")
        cursor.execute("BEGIN IMMEDIATE")  # the write lock: a second process waits, then sees our versions

    def timestamp(self, value: datetime) -> Any:
        return value.astimezone(UTC).isoformat(timespec="microseconds")


class _Postgres:
    name = "postgresql"
    flavor = "postgres"

    def __init__(self, url: str, connect_timeout: int = 5) -> None:
        self.url = url
        self.connect_timeout = connect_timeout

    def open(self) -> Any:
        import psycopg  # optional: only a PostgreSQL URL needs it

        return psycopg.connect(self.url, connect_timeout=self.connect_timeout)

    def begin(self, con: Any) -> None:
        pass  # psycopg opens a transaction at the first statement

    def commit(self, con: Any) -> None:
        con.commit()

    def rollback(self, con: Any) -> None:
        con.rollback()

    def sql(self, statement: str) -> str:
        return statement.replace("?", "%s")

    def lock_for_migration(self, cursor: Any) -> None:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext('pushdown.history'))")

    def timestamp(self, value: datetime) -> Any:
        return value.astimezone(UTC)


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    return str(value)


def _ratio(before: float, after: float) -> float:
    return round(1 - after / before, 6) if before > 0 else 0.0


class HistoryStore:
    """Records in SQLite or PostgreSQL; safe from any thread.

    Each thread keeps one connection (the writer thread, and the server's worker threads that read): opening
    one per call would cost more than the write (closing SQLite's last connection checkpoints the WAL). A
    connection that fails is closed and the next call opens a new one, so a database that comes back is used.
    """

    def __init__(self, backend: _Backend) -> None:
        self._backend = backend
        self._migrated = False
        self._lock = threading.Lock()
        self._local = threading.local()
        self._open: list[Any] = []

    @classmethod
    def from_url(cls, url: str) -> HistoryStore:
        """``sqlite:///path`` or ``postgresql://...`` (``postgres://`` and ``postgresql+psycopg://`` too)."""
        if url.startswith("sqlite:///"):
            return cls(_SQLite(Path(url.removeprefix("sqlite:///"))))
        scheme, sep, rest = url.partition("://")
        if sep and scheme in ("postgresql", "postgres", "postgresql+psycopg"):
            return cls(_Postgres(f"postgresql://{rest}"))
        raise ValueError(f"the history store supports sqlite:/// and postgresql:// URLs, not {scheme}://")

    @classmethod
    def from_settings(cls, settings: Settings) -> HistoryStore:
        return cls.from_url(settings.database_url or f"sqlite:///{(settings.data_dir / 'pushdown.db').as_posix()}")

    @property
    def backend(self) -> str:
        return self._backend.name

    # ------------------------------------------------------------ schema

    def migrate(self, upto: int | None = None) -> int:
        """Apply the migrations not yet applied (up to ``upto``); returns the schema version now in place."""
        with self._connect_raw() as con:
            cur = con.cursor()
            self._backend.lock_for_migration(cur)
            cur.execute(
                "CREATE TABLE IF NOT EXISTS history_migrations "
                "(version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            cur.execute("SELECT version FROM history_migrations")
            applied = {int(row[0]) for row in cur.fetchall()}
            for migration in MIGRATIONS:
                if migration.version in applied or (upto is not None and migration.version > upto):
                    continue
                steps = migration.sqlite if self._backend.flavor == "sqlite" else migration.postgres
                for statement in steps:
                    cur.execute(statement)
                cur.execute(
                    self._backend.sql(
                        "INSERT INTO history_migrations (version, description, applied_at) VALUES (?, ?, ?)"
                    ),
                    (migration.version, migration.description, datetime.now(UTC).isoformat()),
                )
                applied.add(migration.version)
                logger.info("history schema: applied migration %d (%s)", migration.version, migration.description)
            return max(applied, default=0)

    def schema_version(self) -> int:
        with self._connect() as con:
            cur = con.cursor()
            cur.execute("SELECT MAX(version) FROM history_migrations")
            return int(cur.fetchone()[0] or 0)

    @contextlib.contextmanager
    def _connect_raw(self) -> Iterator[Any]:
        """This thread's connection, inside a transaction: committed on success, rolled back and dropped on error."""
        con = getattr(self._local, "con", None)
        if con is None:
            con = self._backend.open()
            self._local.con = con
            with self._lock:
                self._open.append(con)
        try:
            self._backend.begin(con)
            yield con
            self._backend.commit(con)
        except BaseException:
            self._local.con = None
            with contextlib.suppress(Exception):
                self._backend.rollback(con)
            self._forget(con)
            raise

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

    def _forget(self, con: Any) -> None:
        with self._lock:
            if con in self._open:
                self._open.remove(con)
        with contextlib.suppress(Exception):
            con.close()

    def close(self) -> None:
        """Close every thread's connection (threads that call again later open a new one)."""
        with self._lock:
            connections, self._open = self._open, []
        for con in connections:
            with contextlib.suppress(Exception):
                con.close()
        self._local = threading.local()

    def _query(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._connect() as con:
            cur = con.cursor()
            cur.execute(self._backend.sql(statement), tuple(params))
            return list(cur.fetchall())

    # ------------------------------------------------------------ writes

    def add_many(self, records: Sequence[Record]) -> None:
        """Write the records in one transaction; all or none."""
        if not records:
            return
        rows = [
            (
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
                r.request_json,
                r.response_json,
            )
            for r in records
        ]
        tallies = [(r.id, kind, name, n) for r in records for kind, name, n in r.tallies]
        with self._connect() as con:
            cur = con.cursor()
            cur.executemany(self._backend.sql(_INSERT), rows)
            if tallies:
                cur.executemany(self._backend.sql(_INSERT_TALLY), tallies)

    def add(self, record: Record) -> None:
        self.add_many([record])

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
        rows = self._query(f"SELECT {_SUMMARY_COLUMNS}, request, response FROM optimizations WHERE id = ?", [record_id])
        if not rows:
            return None
        record = self._summary(rows[0][:-2])
        record["request"] = json.loads(rows[0][-2])
        record["response"] = json.loads(rows[0][-1])
        tallies = self._query("SELECT kind, name, n FROM optimization_tallies WHERE optimization_id = ?", [record_id])
        record["reasons"] = [
            {"action": kind, "reason": name, "count": int(n)} for kind, name, n in sorted(tallies) if kind != SOURCE
        ]
        return record

    def savings(self, filters: Filters, top: int = 10) -> dict[str, Any]:
        """Totals, series by day, pipeline and task, the top kept/blocked reasons and the estimate sources."""
        where, params = filters.where()
        agg = (
            "COUNT(*), COALESCE(SUM(cost_before), 0), COALESCE(SUM(cost_after), 0), "
            "COALESCE(SUM(pushed), 0), COALESCE(SUM(kept), 0), COALESCE(SUM(blocked), 0)"
        )
        totals = self._group(self._query(f"SELECT {agg} FROM optimizations{where}", params)[0])
        by_day = [
            {"day": row[0], **self._group(row[1:])}
            for row in self._query(f"SELECT day, {agg} FROM optimizations{where} GROUP BY day ORDER BY day", params)
        ]
        by_pipeline = [
            {"pipeline": row[0], **self._group(row[1:])}
            for row in self._query(
                f"SELECT pipeline, {agg} FROM optimizations{where} GROUP BY pipeline "
                "ORDER BY SUM(cost_before) - SUM(cost_after) DESC, pipeline",
                params,
            )
        ]
        by_task = [
            {"pipeline": row[0], "task": row[1], **self._group(row[2:])}
            for row in self._query(
                f"SELECT pipeline, task, {agg} FROM optimizations{where} GROUP BY pipeline, task "
                "ORDER BY SUM(cost_before) - SUM(cost_after) DESC, pipeline, task",
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
    def _group(row: Sequence[Any]) -> dict[str, Any]:
        requests, before, after, pushed, kept, blocked = row
        before, after = float(before), float(after)
        return {
            "requests": int(requests),
            "cost_before": round(before, 4),
            "cost_after": round(after, 4),
            "saved": round(before - after, 4),
            "savings": _ratio(before, after),
            "pushed": int(pushed),
            "kept": int(kept),
            "blocked": int(blocked),
        }

    @staticmethod
    def _summary(row: Sequence[Any]) -> dict[str, Any]:
        names = [c.strip() for c in _SUMMARY_COLUMNS.split(",")]
        record = dict(zip(names, row, strict=True))
        record["created_at"] = _iso(record["created_at"])
        record["sources"] = json.loads(record["sources"] or "{}")
        version = record["statistics_version"]
        record["statistics_version"] = None if version is None else json.loads(version)
        return record


# ---------------------------------------------------------------- recorder


@dataclass
class _Counters:
    submitted: int = 0
    recorded: int = 0
    failed: int = 0
    dropped: int = 0
    last_error: str | None = None
    last_error_at: str | None = None


@dataclass
class _Item:
    request: Any
    response: dict[str, Any]
    response_json: bytes | str | None
    duration_ms: float | None
    request_json: bytes | str | None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))


def _decoded(text: bytes | str | None) -> str | None:
    return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text


def request_dict(request: Any) -> dict[str, Any]:
    """The request as a JSON object: a dataclass (``OptimizeInput``) without its unset fields, or a dict as is."""
    if dataclasses.is_dataclass(request) and not isinstance(request, type):
        values = {f.name: getattr(request, f.name) for f in dataclasses.fields(request)}
        return {name: value for name, value in values.items() if value is not None}
    return dict(request) if isinstance(request, dict) else {"request": repr(request)}


class HistoryRecorder:
    """Hands answers to a writer thread through a bounded queue; ``record`` never blocks and never raises."""

    def __init__(
        self, store: HistoryStore | None, *, queue_size: int = 10_000, batch_size: int = 200, linger: float = 0.05
    ) -> None:
        """``linger``: how long the writer waits for more answers before writing a batch (fewer transactions)."""
        self.store = store
        self.batch_size = batch_size
        self.linger = linger
        self._queue: queue.Queue[_Item | None] = queue.Queue(maxsize=queue_size)
        self._counters = _Counters()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    @classmethod
    def from_settings(cls, settings: Settings) -> HistoryRecorder:
        """The recorder the settings ask for: disabled (no store) when recording is off or the URL is unsupported."""
        if not settings.history_enabled:
            return cls(None)
        try:
            store = HistoryStore.from_settings(settings)
        except ValueError as exc:
            logger.warning("optimization history disabled: %s", exc)
            return cls(None)
        return cls(store, queue_size=settings.history_queue_size)

    @property
    def enabled(self) -> bool:
        return self.store is not None and not self._closed

    def record(
        self,
        request: Any,
        response: dict[str, Any],
        response_json: bytes | str | None = None,
        duration_ms: float | None = None,
        request_json: bytes | str | None = None,
    ) -> None:
        """Queue one answer for the writer; drops it (logged, counted) when the queue is full.

        ``request``: the validated request (``OptimizeInput`` or a dict); ``request_json`` and ``response_json``:
        the bodies as received and sent, stored as they are (serialized again only when not given).
        """
        if not self.enabled:
            return
        try:
            self._ensure_thread()
            with self._lock:
                self._counters.submitted += 1
            self._queue.put_nowait(_Item(request, response, response_json, duration_ms, request_json))
        except queue.Full:
            self._count_loss("dropped", 1, "queue full")
        except Exception as exc:  # recording must never fail an optimization
            self._count_loss("failed", 1, repr(exc))

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far is written or counted as lost; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._settled() < self._counters.submitted:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued (up to ``timeout``) and stop the writer."""
        if self._closed:
            return
        self.flush(timeout)
        self._closed = True
        thread = self._thread
        if thread is not None:
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(None)
            thread.join(timeout)
        if self.store is not None:
            try:
                self.store.close()
            except Exception as exc:
                logger.warning("optimization history: closing the store failed: %r", exc)

    def status(self) -> dict[str, Any]:
        with self._lock:
            counters = dataclasses.asdict(self._counters)
        return {
            "enabled": self.enabled,
            "backend": self.store.backend if self.store is not None else None,
            "queued": self._queue.qsize(),
            **counters,
        }

    # ------------------------------------------------------------ writer

    def _settled(self) -> int:
        c = self._counters
        return c.recorded + c.failed + c.dropped

    def _ensure_thread(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="history-writer", daemon=True)
                    self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            if self.linger > 0:  # let a batch gather: one transaction and one wake-up for many answers
                time.sleep(self.linger)
            while len(batch) < self.batch_size:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._write(batch)
                    return
                batch.append(more)
            self._write(batch)

    def _write(self, batch: list[_Item]) -> None:
        assert self.store is not None
        try:
            records = [self._to_record(item) for item in batch]
            self.store.add_many(records)
        except Exception as exc:
            self._count_loss("failed", len(batch), repr(exc))
            return
        with self._lock:
            self._counters.recorded += len(batch)
            self._lock.notify_all()

    @staticmethod
    def _to_record(item: _Item) -> Record:
        return build_record(
            request_dict(item.request),
            item.response,
            request_json=_decoded(item.request_json),
            response_json=_decoded(item.response_json),
            duration_ms=item.duration_ms,
            created_at=item.created_at,
        )

    def _count_loss(self, kind: str, n: int, error: str) -> None:
        with self._lock:
            setattr(self._counters, kind, getattr(self._counters, kind) + n)
            self._counters.last_error = error
            self._counters.last_error_at = datetime.now(UTC).isoformat(timespec="seconds")
            total = self._counters.failed + self._counters.dropped
            self._lock.notify_all()
        # One line per loss would flood the log while the store is down: log the first and then every 100th.
        if total <= n or total // 100 != (total - n) // 100:
            logger.error("optimization history: %d record(s) %s (%d lost in all): %s", n, kind, total, error)
