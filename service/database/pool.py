"""Connections to one database, reused across calls and threads.

Opening a connection costs more than most statements a store runs (SQLite: the file, WAL mode and two pragmas,
about 0.3 ms; PostgreSQL: a round trip and a server process), and a store must not keep one per thread either:
the server runs each request's work on a thread of its own, so a connection per thread was one left open per
request. A call takes an idle connection (or opens one) and gives it back when its block ends.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from service.database.backends import SQLiteBackend
    >>> pool = ConnectionPool(SQLiteBackend(Path(tempfile.mkdtemp()) / "x.db"))
    >>> with pool.connection() as con:
    ...     con.execute("SELECT 1").fetchone()
    (1,)
    >>> with pool.connection() as again:
    ...     again is con
    True
    >>> pool.close()
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from service.database.backends import Backend


class ConnectionPool:
    """At most ``idle`` connections wait between calls; more are opened while more calls run at once, and closed
    when given back. A block that raises closes its connection and every idle one (the database may have gone
    away: the next call opens a new one, so a database that comes back is used at once)."""

    #: Idle connections kept: a store's writer thread and the requests running at once.
    IDLE = 4

    def __init__(self, backend: Backend, idle: int = IDLE) -> None:
        self._backend = backend
        self.idle = idle
        self._lock = threading.Lock()
        self._idle: list[Any] = []  # newest last: the next call takes the one used last
        self._open: list[Any] = []  # every connection open now, idle or in use

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """A connection for the block; given back with no transaction left open."""
        con = self.take()
        try:
            yield con
        except BaseException:
            self.discard(con)
            raise
        self.give_back(con)

    def take(self) -> Any:
        """An idle connection, or a new one (the backend's error when it cannot open one)."""
        with self._lock:
            if self._idle:
                return self._idle.pop()
        con = self._backend.open()
        with self._lock:
            self._open.append(con)
        return con

    def give_back(self, con: Any) -> None:
        """Idle again (its transaction, if any, rolled back), unless enough are idle or the pool was closed."""
        try:
            self._backend.rollback(con)
        except Exception:  # noqa: BLE001 - a connection that cannot roll back is not reused
            self.discard(con)
            return
        with self._lock:
            if con in self._open and len(self._idle) < self.idle:
                self._idle.append(con)
                return
        self._close(con)

    def discard(self, con: Any) -> None:
        """Close ``con`` and every idle connection."""
        with contextlib.suppress(Exception):
            self._backend.rollback(con)
        with self._lock:
            stale, self._idle = self._idle, []
        for other in (con, *stale):
            self._close(other)

    def close(self) -> None:
        """Close every connection, idle or in use (later calls open new ones)."""
        with self._lock:
            connections, self._open, self._idle = self._open, [], []
        for con in connections:
            with contextlib.suppress(Exception):
                con.close()

    def _close(self, con: Any) -> None:
        with self._lock:
            if con in self._open:
                self._open.remove(con)
        with contextlib.suppress(Exception):
            con.close()
