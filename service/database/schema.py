"""Every table the service keeps, as one ordered list of migrations (history, statistics, and what comes next).

To add or change a table: append ``Migration(<last version + 1>, "what and why", sqlite=(...), postgres=(...))``
(or ``Migration.portable(...)`` when the SQL is the same on both) to ``MIGRATIONS`` below, and a test in
tests/history/test_migrations.py that an older database gets it and keeps its rows. Never edit or reorder a
migration that shipped: databases in the field have applied it already and will not run it again.

Conventions: ``?`` placeholders are not used here (DDL only); timestamps are ``TEXT`` (ISO 8601, UTC) on SQLite
and ``TIMESTAMPTZ`` on PostgreSQL; binary columns are ``BLOB`` / ``BYTEA``; a new column on a table that has rows
needs a default (SQLite cannot add a NOT NULL column without one).
"""

from __future__ import annotations

from service.database.migrations import Migration, check_order


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

_HISTORY_INDEXES = (
    "CREATE INDEX IF NOT EXISTS optimizations_created ON optimizations (created_at)",
    "CREATE INDEX IF NOT EXISTS optimizations_day ON optimizations (day)",
    "CREATE INDEX IF NOT EXISTS optimizations_pipeline_day ON optimizations (pipeline, task, day)",
    "CREATE INDEX IF NOT EXISTS optimization_tallies_kind ON optimization_tallies (kind, name)",
)

# The statistics store created these itself before it used migrations: IF NOT EXISTS keeps such databases.
_STATISTICS_TABLES = (
    """CREATE TABLE IF NOT EXISTS table_versions (
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    stats_json TEXT NOT NULL,
    sample_path TEXT,
    PRIMARY KEY (name, version)
)""",
    """CREATE TABLE IF NOT EXISTS current_versions (
    name TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    FOREIGN KEY (name, version) REFERENCES table_versions (name, version)
)""",
)

_COUNTERS = ("recorded", "dropped", "failed", "timed_out", "expired")


def _compact_history(blob: str, length: str) -> tuple[str, ...]:
    """Compressed bodies (the text columns stay for older rows), each row's stored size for the size limit,
    and the history's counters, kept in the database so that losses stay visible after a restart."""
    return (
        f"ALTER TABLE optimizations ADD COLUMN request_z {blob}",
        f"ALTER TABLE optimizations ADD COLUMN response_z {blob}",
        "ALTER TABLE optimizations ADD COLUMN stored_bytes BIGINT NOT NULL DEFAULT 0",
        f"UPDATE optimizations SET stored_bytes = {length}(request) + {length}(response) + 256",
        "CREATE TABLE history_counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
        "INSERT INTO history_counters (name, value) SELECT 'recorded', COUNT(*) FROM optimizations",
        "INSERT INTO history_counters (name, value) VALUES "
        + ", ".join(f"('{name}', 0)" for name in _COUNTERS if name != "recorded"),
    )


def _feedback_tables(timestamp: str) -> tuple[str, ...]:
    """A runner's counts per request, and what they teach per scan (service/feedback); both go with their
    optimization (ON DELETE CASCADE), so the history's retention covers them."""
    return (
        f"""CREATE TABLE optimization_feedback (
    optimization_id TEXT PRIMARY KEY REFERENCES optimizations (id) ON DELETE CASCADE,
    received_at {timestamp} NOT NULL,
    nodes TEXT NOT NULL
)""",
        f"""CREATE TABLE feedback_observations (
    optimization_id TEXT NOT NULL REFERENCES optimizations (id) ON DELETE CASCADE,
    node_id TEXT NOT NULL,
    table_name TEXT NOT NULL,
    predicate TEXT NOT NULL,
    template TEXT NOT NULL,
    pipeline TEXT,
    task TEXT,
    rows_in DOUBLE PRECISION NOT NULL,
    rows_out DOUBLE PRECISION NOT NULL,
    table_rows DOUBLE PRECISION,
    statistics_version TEXT,
    observed_at {timestamp} NOT NULL,
    PRIMARY KEY (optimization_id, node_id)
)""",
        "CREATE INDEX IF NOT EXISTS feedback_observations_key ON feedback_observations (table_name, predicate)",
        "CREATE INDEX IF NOT EXISTS feedback_observations_task "
        "ON feedback_observations (pipeline, task, table_name, template)",
    )


_FEEDBACK_VERSIONS = """CREATE TABLE feedback_versions (
    table_name TEXT PRIMARY KEY,
    version BIGINT NOT NULL
)"""
_FILL_FEEDBACK_VERSIONS = (
    "INSERT INTO feedback_versions (table_name, version) "
    "SELECT table_name, COUNT(*) FROM feedback_observations GROUP BY table_name"
)
_BUMP = (
    "INSERT INTO feedback_versions (table_name, version) VALUES ({row}.table_name, 1) "
    "ON CONFLICT (table_name) DO UPDATE SET version = feedback_versions.version + 1"
)


def _feedback_versions_sqlite() -> tuple[str, ...]:
    """A version per table, bumped by a trigger on every insert and delete of its observations (the history's
    retention deletes them by cascade, which fires triggers too), so the request cache's probe reads one small
    table instead of counting the observations every second."""
    return (
        _FEEDBACK_VERSIONS,
        _FILL_FEEDBACK_VERSIONS,
        "CREATE TRIGGER feedback_versions_insert AFTER INSERT ON feedback_observations "
        f"BEGIN {_BUMP.format(row='NEW')}; END",
        "CREATE TRIGGER feedback_versions_delete AFTER DELETE ON feedback_observations "
        f"BEGIN {_BUMP.format(row='OLD')}; END",
    )


def _feedback_versions_postgres() -> tuple[str, ...]:
    """As ``_feedback_versions_sqlite``, with PostgreSQL's trigger function."""
    return (
        _FEEDBACK_VERSIONS,
        _FILL_FEEDBACK_VERSIONS,
        f"""CREATE FUNCTION feedback_versions_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        {_BUMP.format(row="OLD")};
    ELSE
        {_BUMP.format(row="NEW")};
    END IF;
    RETURN NULL;
END
$$""",
        "CREATE TRIGGER feedback_versions_bump AFTER INSERT OR DELETE ON feedback_observations "
        "FOR EACH ROW EXECUTE FUNCTION feedback_versions_bump()",
    )


def _analyze_jobs_table(timestamp: str) -> tuple[str, ...]:
    """Analyze jobs' state (service/job_store.py), so that any worker or replica answers ``GET /jobs/{id}``."""
    return (
        f"""CREATE TABLE analyze_jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    state TEXT NOT NULL,
    stage TEXT,
    rows_seen BIGINT NOT NULL DEFAULT 0,
    percent DOUBLE PRECISION NOT NULL DEFAULT 0,
    error TEXT,
    result TEXT,
    created_at {timestamp} NOT NULL,
    started_at {timestamp},
    finished_at {timestamp},
    updated_at {timestamp} NOT NULL
)""",
        "CREATE INDEX IF NOT EXISTS analyze_jobs_state ON analyze_jobs (state, finished_at)",
    )


def _function_costs_table(timestamp: str) -> tuple[str, ...]:
    """What a run measured per function (service/feedback/functions.py): per-call cost on Spark's executors, in
    comparisons; goes with its optimization (ON DELETE CASCADE), so the history's retention covers it."""
    return (
        f"""CREATE TABLE function_cost_observations (
    optimization_id TEXT NOT NULL REFERENCES optimizations (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    calls DOUBLE PRECISION NOT NULL,
    per_call_s DOUBLE PRECISION NOT NULL,
    unit_s DOUBLE PRECISION NOT NULL,
    cost DOUBLE PRECISION NOT NULL,
    pipeline TEXT,
    task TEXT,
    observed_at {timestamp} NOT NULL,
    PRIMARY KEY (optimization_id, name)
)""",
        "CREATE INDEX IF NOT EXISTS function_cost_observations_name ON function_cost_observations (name, observed_at)",
    )


#: Applied in order, each in its own transaction; never edit one that shipped, add the next.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "optimizations and their tallies",
        sqlite=(_optimizations_table("TEXT"), _TALLIES_TABLE),
        postgres=(_optimizations_table("TIMESTAMPTZ"), _TALLIES_TABLE),
    ),
    Migration.portable(2, "indexes for the dashboard's filters and series", *_HISTORY_INDEXES),
    Migration.portable(3, "statistics: table versions and the current pointer", *_STATISTICS_TABLES),
    Migration(
        4,
        "history: compressed bodies, stored size, persistent counters",
        sqlite=_compact_history("BLOB", "LENGTH"),
        postgres=_compact_history("BYTEA", "OCTET_LENGTH"),
    ),
    Migration(
        5,
        "feedback: actual rows per request and observed selectivities",
        sqlite=_feedback_tables("TEXT"),
        postgres=_feedback_tables("TIMESTAMPTZ"),
    ),
    Migration(
        6,
        "analyze jobs: state shared by every worker and replica",
        sqlite=_analyze_jobs_table("TEXT"),
        postgres=_analyze_jobs_table("TIMESTAMPTZ"),
    ),
    Migration.portable(
        7,
        "history: each answer's rule-based baseline cost (NULL: recorded before baselines), for savings against it",
        "ALTER TABLE optimizations ADD COLUMN cost_baseline DOUBLE PRECISION",
    ),
    Migration.portable(
        8,
        "analyze jobs: the process that runs each (host:pid), so a restart can fail the jobs a killed one left",
        "ALTER TABLE analyze_jobs ADD COLUMN owner TEXT",
    ),
    Migration(
        9,
        "feedback: a version per table, bumped by triggers, for the request cache's cheap probe",
        sqlite=_feedback_versions_sqlite(),
        postgres=_feedback_versions_postgres(),
    ),
    Migration(
        10,
        "feedback: per-call cost of functions measured on Spark's executors, for costs learned from runs",
        sqlite=_function_costs_table("TEXT"),
        postgres=_function_costs_table("TIMESTAMPTZ"),
    ),
)

check_order(MIGRATIONS)
