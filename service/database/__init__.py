"""The service's database: SQLite (embedded default) or PostgreSQL, one schema for every store.

- ``backends``: how to open, lock and speak to each database (``backend_from_url``).
- ``schema``: the ordered list of migrations every store's tables come from (add a table there).
- ``migrations``: applies that list once per database, under a lock, and records what was applied.
- ``pool``: the few connections a store reuses across calls and threads.
"""

from service.database.backends import Backend, PostgresBackend, SQLiteBackend, backend_from_url
from service.database.migrations import Migration, apply_migrations, schema_version
from service.database.schema import MIGRATIONS

__all__ = [
    "MIGRATIONS",
    "Backend",
    "Migration",
    "PostgresBackend",
    "SQLiteBackend",
    "apply_migrations",
    "backend_from_url",
    "schema_version",
]
