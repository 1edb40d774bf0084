"""The service's Spark runner reports each action's rows; it does not when told not to or without a service."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.client import PushdownClient, PushdownError
from service.settings import Settings
from service.spark_runner import run_sql
from tests.feedback.conftest import CATALOG, Tables, register

pytestmark = pytest.mark.slow
Serve = Callable[[FastAPI], AbstractContextManager[str]]
SQL = "SELECT s, count(*) AS n FROM fb_t WHERE b > 5 AND s LIKE 'x1%' GROUP BY s"


def test_reports_after_a_write_and_not_when_off(
    spark: Any, tables: Tables, serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    register(spark, tables.root)
    truth = sum(1 for r in tables.t if r[1] is not None and r[1] > 5 and r[2].startswith("x1"))
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        client = PushdownClient(url)
        run = run_sql(spark, SQL, client=client, catalog=CATALOG)
        run.write_parquet(str(tmp_path / "out"))
        assert run.actual is not None
        stored = http.get(f"/api/optimizations/{run.answer['request_id']}").json()["feedback"]
        assert any(n["operator"] == "scan" and n["actual_rows"] == truth for n in stored["nodes"])

        quiet = run_sql(spark, SQL, client=client, catalog=CATALOG, feedback=False)
        quiet.collect()
        assert quiet.actual is None
        assert http.get(f"/api/optimizations/{quiet.answer['request_id']}").json()["feedback"] is None

    local = run_sql(
        spark, SQL, client=PushdownClient(settings=make_settings(data_dir=tmp_path / "local")), catalog=CATALOG
    )
    local.collect()
    assert local.actual is None  # in process there is no history to attach counts to
    with pytest.raises(PushdownError, match="needs a service URL"):
        PushdownClient(settings=make_settings(data_dir=tmp_path / "local")).feedback("x", [])
