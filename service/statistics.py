"""The statistics store: analyzed tables, versioned, and what ``/optimize`` reads when a catalog names them.

Embedded default: SQLite (``table_versions`` holds every version's statistics as
JSON, ``current_versions`` points at the one requests get) and one Parquet file per
sample under ``<data_dir>/samples/<name>/v<N>.parquet``.

A new version becomes visible atomically: the sample is written to a temporary
file and fsynced (``stage_sample``), then one transaction renames it into place,
inserts the version row and moves the current pointer (``commit``). A job that
fails or is killed before the commit leaves at most an orphan temporary file; the
previous version stays current and complete.

The store opens its database on first use, so an app that never analyzes
anything never creates files.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costmodel.sample import Sample
from service.database import MIGRATIONS, PostgresBackend, SQLiteBackend, apply_migrations
from service.database.pool import ConnectionPool
from service.errors import InputError
from service.statistics_arrow import sample_from_arrow
from service.statistics_catalog import optimize_with_samples, resolve_catalog, sample_sources

if TYPE_CHECKING:
    import pyarrow as pa

    from service.settings import Settings

# requests resolve their catalogs (service/statistics_catalog.py) and analyses convert samples
# (service/statistics_arrow.py) through this module, the store's one name
__all__ = [
    "NAME_PATTERN",
    "StagedSample",
    "StatisticsStore",
    "StoredTable",
    "check_name",
    "optimize_with_samples",
    "resolve_catalog",
    "sample_from_arrow",
    "sample_sources",
]

#: Table names become directory names: letters, digits, ``_``, ``-`` and ``.`` (not leading), at most 128.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}$")
#: Samples kept decoded in memory, most recently used first; one is ~100,000 rows per column.
SAMPLE_CACHE_SIZE = 8
#: Keys a ``{"ref": ...}`` catalog entry takes from the store; the caller's own keys beside ``ref`` win.
WIRE_KEYS = ("columns", "row_count", "column_stats", "containers")


def check_name(name: str, path: str = "$.name") -> str:
    """Refuse names that are not safe as a directory name (``..``, slashes, empty)."""
    if not NAME_PATTERN.match(name) or ".." in name:
        raise InputError(
            "invalid_table_name",
            f"table name {name!r} must be 1-128 letters, digits, '_', '-' or '.', not starting with '.' or '-'",
            path,
        )
    return name


@dataclass(frozen=True, slots=True)
class StoredTable:
    """One stored version of a table's statistics."""

    name: str
    version: int
    created_at: str
    stats: dict[str, Any]
    sample_path: str | None

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "row_count": self.stats.get("row_count"),
            "analyzed_at": self.created_at,
            "source": self.stats.get("source"),
        }

    def to_catalog(self) -> dict[str, Any]:
        """The table in the request catalog's wire form."""
        return {key: self.stats[key] for key in WIRE_KEYS if key in self.stats}


@dataclass(frozen=True, slots=True)
class StagedSample:
    """A sample written to a temporary file, waiting for ``commit``."""

    name: str
    path: Path | None


class StatisticsStore:
    """Versioned statistics per table, in SQLite (default) or PostgreSQL; samples as Parquet files.

    Safe to share between threads: each operation takes a pooled connection (``service.database.pool``). The
    backends are the history store's (``service.database``), and so is the schema: the same URLs select them.
    """

    def __init__(self, db_path: Path | None, samples_dir: Path, url: str | None = None) -> None:
        self.db_path = Path(db_path) if db_path is not None else None
        self.samples_dir = Path(samples_dir)
        self.url = url
        self._backend: SQLiteBackend | PostgresBackend = (
            PostgresBackend(url) if url is not None else SQLiteBackend(self.db_path)  # type: ignore[arg-type]
        )
        self._ready = False
        self._pool = ConnectionPool(self._backend)
        self._lock = threading.Lock()
        self._samples: OrderedDict[tuple[str, int], Sample] = OrderedDict()
        #: called with the table's name after each committed analysis
        self.listeners: list[Callable[[str], None]] = []

    @classmethod
    def from_settings(cls, settings: Settings) -> StatisticsStore:
        """SQLite from ``database_url`` (default: under ``data_dir``) or PostgreSQL (``postgresql://``);
        samples under ``data_dir/samples`` either way."""
        url = settings.database_url or ""
        if url.startswith("sqlite:///"):
            return cls(Path(url.removeprefix("sqlite:///")), settings.data_dir / "samples")
        if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
            return cls(None, settings.data_dir / "samples", url.replace("postgresql+psycopg://", "postgresql://"))
        raise ValueError(f"the statistics store supports sqlite:/// and postgresql:// URLs, not {url.split(':', 1)[0]}")

    # ------------------------------------------------------------ database

    def _exists(self) -> bool:
        """False while an SQLite file was never created: reading then needs no file."""
        return self.db_path is None or self.db_path.exists()

    @contextlib.contextmanager
    def _connect(self) -> Iterator[Any]:
        """A pooled connection (``service.database.pool``): a request reads a few tables' statistics, and
        opening a connection for each read took longer than the engine's whole optimization."""
        try:
            con = self._pool.take()
        except Exception as exc:  # an unreachable server is the service's problem, said as a 503
            raise InputError(
                "statistics_unavailable", f"the statistics store cannot be reached ({type(exc).__name__})", "$"
            ) from exc
        try:
            if not self._ready:
                apply_migrations(self._backend, MIGRATIONS)
                self._ready = True
            yield con
        except BaseException:
            self._pool.discard(con)
            raise
        self._pool.give_back(con)

    def close(self) -> None:
        """Close the store's connections (later calls open new ones)."""
        self._pool.close()

    def _query(self, con: Any, statement: str, params: tuple[Any, ...] = ()) -> Any:
        return con.execute(self._backend.sql(statement), params)

    def tables(self) -> list[StoredTable]:
        """The current version of every table, by name."""
        if not self._exists():
            return []
        with self._connect() as con:
            rows = self._query(
                con,
                "SELECT v.name, v.version, v.created_at, v.stats_json, v.sample_path FROM current_versions c "
                "JOIN table_versions v ON v.name = c.name AND v.version = c.version ORDER BY v.name",
            ).fetchall()
        return [StoredTable(r[0], r[1], r[2], json.loads(r[3]), r[4]) for r in rows]

    def names(self) -> list[str]:
        """Every table's name, sorted; read on each request that leaves a table to the store, so without
        reading any table's statistics."""
        return [name for name, _ in self.state()]

    def state(self) -> tuple[tuple[str, int], ...]:
        """Every table's current version: changes whenever any process commits an analysis (cache probes)."""
        if not self._exists():
            return ()
        with self._connect() as con:
            rows = self._query(con, "SELECT name, version FROM current_versions ORDER BY name").fetchall()
        return tuple((str(r[0]), int(r[1])) for r in rows)

    def versions(self, name: str) -> list[int]:
        if not self._exists():
            return []
        with self._connect() as con:
            rows = self._query(con, "SELECT version FROM table_versions WHERE name = ? ORDER BY version", (name,))
            return [r[0] for r in rows.fetchall()]

    def get(self, name: str, version: int | None = None) -> StoredTable | None:
        """The current version, or the given one; ``None`` when there is no such table or version."""
        if not self._exists():
            return None
        with self._connect() as con:
            if version is None:
                found = self._query(con, "SELECT version FROM current_versions WHERE name = ?", (name,)).fetchone()
                if found is None:
                    return None
                version = int(found[0])
            row = self._query(
                con,
                "SELECT name, version, created_at, stats_json, sample_path FROM table_versions "
                "WHERE name = ? AND version = ?",
                (name, version),
            ).fetchone()
        return None if row is None else StoredTable(row[0], row[1], row[2], json.loads(row[3]), row[4])

    # ------------------------------------------------------------ writing

    def stage_sample(self, name: str, sample: pa.Table | None) -> StagedSample:
        """Write the sample to a temporary file beside its final place and flush it to disk."""
        import pyarrow.parquet as pq

        check_name(name)
        if sample is None:
            return StagedSample(name, None)
        folder = self.samples_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".tmp-{uuid.uuid4().hex}.parquet"
        with open(tmp, "wb") as handle:
            pq.write_table(sample, handle)
            handle.flush()
            os.fsync(handle.fileno())
        return StagedSample(name, tmp)

    def commit(self, name: str, stats: dict[str, Any], staged: StagedSample) -> int:
        """Make ``stats`` (and the staged sample) the table's new current version, in one transaction."""
        check_name(name)
        created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        body = json.dumps(stats, allow_nan=False)
        with self._connect() as con:
            if self.db_path is not None:
                con.execute("BEGIN IMMEDIATE")  # takes the write lock: the version number below is ours
            else:  # one committer at a time per store, across processes
                con.execute("SELECT pg_advisory_xact_lock(hashtext('pushdown.statistics'))")
            try:
                (latest,) = self._query(
                    con, "SELECT MAX(version) FROM table_versions WHERE name = ?", (name,)
                ).fetchone()
                version = int(latest or 0) + 1
                relative = None
                if staged.path is not None:
                    relative = f"{name}/v{version}.parquet"
                    # a crash after this rename and before COMMIT leaves an unreferenced file that the next
                    # commit of this version number replaces
                    os.replace(staged.path, self.samples_dir / relative)
                self._query(
                    con,
                    "INSERT INTO table_versions (name, version, created_at, stats_json, sample_path) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (name, version, created, body, relative),
                )
                self._query(
                    con,
                    "INSERT INTO current_versions (name, version) VALUES (?, ?) "
                    "ON CONFLICT (name) DO UPDATE SET version = excluded.version",
                    (name, version),
                )
                if self.db_path is not None:
                    con.execute("COMMIT")
                else:
                    con.commit()
            except BaseException:
                if self.db_path is not None:
                    con.execute("ROLLBACK")
                else:
                    con.rollback()
                raise
        for listener in self.listeners:  # e.g. the request cache: answers that read statistics are stale
            listener(name)
        return version

    # ------------------------------------------------------------ samples

    def sample(self, table: StoredTable) -> Sample | None:
        """The version's sample, decoded for the estimator; cached, since requests reuse the same tables."""
        if table.sample_path is None:
            return None
        key = (table.name, table.version)
        with self._lock:
            cached = self._samples.get(key)
            if cached is not None:
                self._samples.move_to_end(key)
                return cached
        import pyarrow.parquet as pq

        path = self.samples_dir / table.sample_path
        if not path.exists():
            return None
        sample = sample_from_arrow(table.name, float(table.stats.get("row_count") or 0), pq.read_table(path))
        with self._lock:
            self._samples[key] = sample
            while len(self._samples) > SAMPLE_CACHE_SIZE:
                self._samples.popitem(last=False)
        return sample
