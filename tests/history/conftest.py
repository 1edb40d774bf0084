"""Fixtures for the history tests: settings on a temp SQLite file, seeded records, and (from tests/postgres.py,
through the root conftest) a real PostgreSQL server."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from service.history import HistoryStore, Record, build_record
from service.optimize import OptimizeInput, OptimizeService
from service.settings import Settings
from tests.history.requests import MIX, request
from tests.postgres import PostgresServer

# ---------------------------------------------------------------- stores and settings


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{(tmp_path / 'history.db').as_posix()}"


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each test that uses it runs on SQLite and on a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{(tmp_path / 'history.db').as_posix()}"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.new_database()


@pytest.fixture
def history_settings(make_settings: Callable[..., Settings], tmp_path: Path) -> Callable[..., Settings]:
    """``history_settings(database_url=..., api_token=...)``: settings with data under this test's temp dir."""

    def build(**overrides: Any) -> Settings:
        return make_settings(**{"data_dir": tmp_path / "data", "database_url": None, **overrides})

    return build


# ---------------------------------------------------------------- seeded history

NOW = datetime(2026, 11, 20, 15, 30, tzinfo=UTC)


def seeded_records(days: int = 10, now: datetime = NOW) -> list[Record]:
    """Real engine answers for the MIX, one round per day over ``days`` days up to ``now``; newest last."""
    service = OptimizeService()
    records = []
    for day in range(days - 1, -1, -1):
        for i, (kind, pipeline, task) in enumerate(MIX):
            if (day + i) % 4 == 3:  # not every job runs every day
                continue
            body = request(kind, pipeline, task, f"run-{day}")
            answer = service.optimize(OptimizeInput(**body))
            records.append(build_record(body, answer, created_at=now - timedelta(days=day, minutes=10 * i)))
    return records


@pytest.fixture(scope="session")
def seed_records() -> list[Record]:
    return seeded_records()


def seed(store: HistoryStore, records: list[Record]) -> None:
    store.add_many(records)
