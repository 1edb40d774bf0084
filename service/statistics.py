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

import numpy as np

from costmodel.sample import Sample
from service.database import MIGRATIONS, PostgresBackend, SQLiteBackend, apply_migrations
from service.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from service.settings import Settings

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

    Safe to share between threads: one connection per operation. The backends are the history
    store's (``service.database``), and so is the schema: the same URLs select them.
    """

    def __init__(self, db_path: Path | None, samples_dir: Path, url: str | None = None) -> None:
        self.db_path = Path(db_path) if db_path is not None else None
        self.samples_dir = Path(samples_dir)
        self.url = url
        self._backend: SQLiteBackend | PostgresBackend = (
            PostgresBackend(url) if url is not None else SQLiteBackend(self.db_path)  # type: ignore[arg-type]
        )
        self._ready = False
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
        try:
            con = self._backend.open()
        except Exception as exc:  # an unreachable server is the service's problem, said as a 503
            raise InputError(
                "statistics_unavailable", f"the statistics store cannot be reached ({type(exc).__name__})", "$"
            ) from exc
        try:
            if not self._ready:
                apply_migrations(self._backend, MIGRATIONS)
                self._ready = True
            yield con
        finally:
            con.close()

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
        return [t.name for t in self.tables()]

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


# ---------------------------------------------------------------- Arrow -> Sample


def _column_array(column: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """One Arrow column as ``Sample`` wants it: (values, nulls); None for types the estimator cannot read."""
    import pyarrow as pa
    import pyarrow.compute as pc

    typ = column.type
    nulls = column.is_null().to_numpy(zero_copy_only=False).astype(bool)
    if pa.types.is_boolean(typ):
        values = pc.fill_null(column, False).to_numpy(zero_copy_only=False).astype(bool)
    elif pa.types.is_integer(typ):
        values = pc.fill_null(column.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    elif pa.types.is_floating(typ) or pa.types.is_decimal(typ):
        values = pc.fill_null(column.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False).astype(np.float64)
    elif pa.types.is_date(typ):
        days = pc.fill_null(column.cast(pa.date32()).cast(pa.int32()), 0).to_numpy(zero_copy_only=False)
        values = days.astype("datetime64[D]")
    elif pa.types.is_timestamp(typ):
        # Spark hands timestamps over in UTC (the session time zone is UTC in the service); drop the zone
        micros = pc.fill_null(column.cast(pa.timestamp("us", tz=typ.tz)).cast(pa.int64()), 0)
        values = micros.to_numpy(zero_copy_only=False).astype(np.int64).view("datetime64[us]")
    elif pa.types.is_string(typ) or pa.types.is_large_string(typ):
        values = np.array(["" if v is None else v for v in column.to_pylist()], dtype=object)
    else:
        return None
    return values, nulls


def sample_from_arrow(table: str, table_rows: float, data: pa.Table) -> Sample:
    """An Arrow table (as Spark's ``toArrow`` or a Parquet file gives it) as a ``costmodel.sample.Sample``."""
    values: dict[str, np.ndarray] = {}
    nulls: dict[str, np.ndarray] = {}
    for name in data.column_names:
        converted = _column_array(data.column(name))
        if converted is not None:
            values[name], nulls[name] = converted
    return Sample(table, table_rows, values, nulls)


# ---------------------------------------------------------------- request catalogs


def resolve_catalog(
    catalog: dict[str, Any] | None,
    store: StatisticsStore | None,
    used: list[tuple[str, StoredTable]] | None = None,
) -> tuple[dict[str, Any] | None, dict[str, Sample]]:
    """Replace every ``{"ref": name, "version"?: n}`` table with the stored statistics; return the samples too.

    ``used`` (when given) receives (name in the request, stored version) for every table resolved.

    Samples are keyed by the table's name in the request (the name the query uses), not the stored name.
    Keys the caller gives beside ``ref`` (e.g. ``indexes``) override the stored ones. Catalogs without
    refs come back unchanged and never touch the store.
    """
    if not isinstance(catalog, dict) or not isinstance(catalog.get("tables"), dict):
        return catalog, {}
    tables = catalog["tables"]
    if not any(isinstance(t, dict) and "ref" in t for t in tables.values()):
        return catalog, {}
    resolved: dict[str, Any] = {}
    samples: dict[str, Sample] = {}
    for query_name, entry in tables.items():
        if not isinstance(entry, dict) or "ref" not in entry:
            resolved[query_name] = entry
            continue
        stored = _lookup(query_name, entry, store)
        if used is not None:
            used.append((query_name, stored))
        extra = {k: v for k, v in entry.items() if k not in ("ref", "version")}
        resolved[query_name] = {**stored.to_catalog(), **extra}
        sample = store.sample(stored) if store is not None else None
        if sample is not None:
            samples[query_name] = Sample(query_name, sample.table_rows, sample.values, sample.nulls)
    return {**catalog, "tables": resolved}, samples


def _lookup(query_name: str, entry: dict[str, Any], store: StatisticsStore | None) -> StoredTable:
    path = f"$.catalog.tables.{query_name}"
    ref, version = entry["ref"], entry.get("version")
    if not isinstance(ref, str) or not ref:
        raise InputError("invalid_catalog", "ref must be the name of an analyzed table", f"{path}.ref")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise InputError("invalid_catalog", "version must be an integer", f"{path}.version")
    if store is None:
        raise InputError("statistics_unavailable", "this service has no statistics store to resolve ref", path)
    stored = store.get(ref, version)
    if stored is not None:
        return stored
    if version is not None and store.get(ref) is not None:
        versions = store.versions(ref)
        raise InputError(
            "unknown_version",
            f"table {ref!r} has no version {version}; versions: {', '.join(map(str, versions))}",
            f"{path}.version",
            {"ref": ref, "version": version, "versions": versions},
        )
    names = store.names()
    raise InputError(
        "unknown_table",
        f"no analyzed table {ref!r}; analyzed tables: {', '.join(names) or 'none'}",
        f"{path}.ref",
        {"ref": ref, "tables": names},
    )


# ---------------------------------------------------------------- the engine with samples


def sample_sources(samples: dict[str, Sample]) -> tuple[Any, ...] | None:
    """The estimator chain when samples are known: the sample first, then column statistics.

    The sample source also falls back to statistics itself when too few sampled rows match for a tight
    interval. ``None`` (the engine's default chain) when there are no samples.
    """
    if not samples:
        return None
    from costmodel.estimate import ColumnStatsSource
    from costmodel.sample import SampleSource

    statistics = ColumnStatsSource()
    return (SampleSource(samples, fallback=statistics), statistics)


def optimize_with_samples(
    plan: Any, catalog: Any, options: Any, samples: dict[str, Sample] | None = None, front: tuple[Any, ...] = ()
) -> dict[str, Any]:
    """``costmodel.optimize_wire`` with the sample source in front of the estimator chain, and ``front`` (e.g. the
    feedback source) before that."""
    from costmodel import catalog_from_wire, optimize, options_from_wire, plan_from_wire
    from costmodel.estimate import DEFAULT_SOURCES

    sources = sample_sources(samples or {})
    if sources is None and not front:
        from costmodel import optimize_wire

        return optimize_wire(plan, catalog, options)
    cat = catalog_from_wire(catalog)
    opts = options_from_wire(options)
    chain = (*front, *(sources if sources is not None else DEFAULT_SOURCES))
    return optimize(plan_from_wire(plan, cat, functions=opts.functions), cat, opts, sources=chain).to_wire()
