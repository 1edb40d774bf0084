"""A real PostgreSQL server for the test session (the ``postgres`` fixture, registered in tests/conftest.py).

The server is Debian's (``scripts/ci-setup.sh`` installs it): ``initdb`` into a temp dir and ``pg_ctl start``
on a free loopback port, as the ``postgres`` user when the tests run as root (the server refuses to run as
root). The tests skip, saying why, only when the server's binaries are not installed.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.serving import free_port

# ---------------------------------------------------------------- PostgreSQL


def _pg_bindir() -> Path | None:
    """Where initdb and pg_ctl are: on PATH, or Debian's /usr/lib/postgresql/<major>/bin (newest major)."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


@dataclass
class PostgresServer:
    bindir: Path
    root: Path
    port: int
    run_as: list[str]
    _databases: Iterator[int] = field(default_factory=itertools.count)

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def pg(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.run_as, *args], check=check, capture_output=True, text=True, timeout=60)

    def new_database(self) -> str:
        """A fresh, empty database on this server; its URL."""
        import psycopg

        name = f"history_{os.getpid()}_{next(self._databases)}"
        with psycopg.connect(self.admin_url, autocommit=True) as con:
            con.execute(f"CREATE DATABASE {name}")
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def start(self) -> None:
        data = self.root / "data"
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        result = self.pg(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "-t",
            "30",
            "start",
            check=False,
        )
        if result.returncode != 0:
            log = (self.root / "log").read_text() if (self.root / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {result.stdout}{result.stderr}\n{log}")

    def stop(self) -> None:
        self.pg(str(self.bindir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "fast", "-w", "stop", check=False)


def connections_to(url: str) -> int:
    """Connections open to ``url``'s database, as PostgreSQL counts them (this query's own left out)."""
    import psycopg

    with psycopg.connect(url) as con:
        row = con.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    return int(row[0]) if row else 0


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the session, in a temp dir, on a free port; removed afterwards."""
    bindir = _pg_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not installed: run scripts/ci-setup.sh")
    root = Path(tempfile.mkdtemp(prefix="pushdown-pg-"))
    run_as: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root: run it as the postgres user Debian's package made
        shutil.chown(root, user="postgres", group="postgres")
        runuser = shutil.which("runuser")
        run_as = [runuser, "-u", "postgres", "--"] if runuser else ["su", "postgres", "-s", "/bin/sh", "-c"]
        if not runuser:
            raise RuntimeError("running as root needs runuser (util-linux) to start PostgreSQL as postgres")
    server = PostgresServer(bindir, root, free_port(), run_as)
    init = server.pg(
        str(bindir / "initdb"),
        "-D",
        str(root / "data"),
        "-U",
        "postgres",
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--no-sync",
        check=False,
    )
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {init.stdout}{init.stderr}")
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
