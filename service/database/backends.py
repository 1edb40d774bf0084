"""The two databases the service speaks to, behind one small interface.

``SQLiteBackend`` is the embedded default (one file under ``data_dir``); ``PostgresBackend`` is used when
``PUSHDOWN_DATABASE_URL`` is a ``postgresql://`` URL. Statements are written with ``?`` placeholders and
translated by ``sql()``; anything else that differs (transactions, locks, timestamps, binary columns) is a
method here, so the stores above never test which database they are on.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol


class Backend(Protocol):
    #: Shown to operators (``/api/history/status``): ``sqlite`` or ``postgresql``.
    name: str
    #: Picks a migration's statements: ``sqlite`` or ``postgres``.
    flavor: str

    def open(self) -> Any: ...

    def begin(self, con: Any) -> None: ...

    def commit(self, con: Any) -> None: ...

    def rollback(self, con: Any) -> None: ...

    def sql(self, statement: str) -> str: ...

    def lock_for_write(self, cursor: Any, name: str) -> None: ...

    def timestamp(self, value: datetime) -> Any: ...

    def table_exists(self, cursor: Any, table: str) -> bool: ...


def backend_from_url(url: str) -> SQLiteBackend | PostgresBackend:
    """``sqlite:///path`` or ``postgresql://...`` (``postgres://`` and ``postgresql+psycopg://`` too).

    >>> backend_from_url("postgres://u@h/db").url
    'postgresql://u@h/db'
    """
    if url.startswith("sqlite:///"):
        return SQLiteBackend(Path(url.removeprefix("sqlite:///")))
    scheme, sep, rest = url.partition("://")
    if sep and scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        return PostgresBackend(f"postgresql://{rest}")
    raise ValueError(f"the database supports sqlite:/// and postgresql:// URLs, not {scheme}://")


class SQLiteBackend:
    """WAL mode, so readers never wait for the writer; ``synchronous=NORMAL``: a commit survives a crash of the
    process (not of the machine) without an fsync per commit."""

    name = "sqlite"
    flavor = "sqlite"

    #: How long a connection waits for another one's lock before "database is locked".
    busy_timeout_s = 30.0

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

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
        """An autocommit connection (``begin`` opens transactions explicitly), usable from any thread."""
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

    def lock_for_write(self, cursor: Any, name: str) -> None:
        """Take the database's write lock now (not at the first write): a second process waits here, then
        sees what the first one committed. One lock per file, so ``name`` is not needed."""
        cursor.execute("COMMIT")
        cursor.execute("BEGIN IMMEDIATE")

    def timestamp(self, value: datetime) -> Any:
        return value.astimezone(UTC).isoformat(timespec="microseconds")

    def table_exists(self, cursor: Any, table: str) -> bool:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
        return cursor.fetchone() is not None


class PostgresBackend:
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

    def lock_for_write(self, cursor: Any, name: str) -> None:
        """A transaction-scoped advisory lock named ``name``: one holder at a time, across processes."""
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (name,))

    def timestamp(self, value: datetime) -> Any:
        return value.astimezone(UTC)

    def table_exists(self, cursor: Any, table: str) -> bool:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", (table,))
        return bool(cursor.fetchone()[0])
