"""``pushdown explain <request id>`` as a user runs it: a subprocess on the history the service wrote."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.settings import Settings
from tests.feedback.conftest import CATALOG
from tests.service.test_cli import run

Serve = Callable[[FastAPI], AbstractContextManager[str]]


@pytest.fixture
def recorded(tmp_path: Path, make_settings: Callable[..., Settings], serve: Serve) -> tuple[str, str, dict[str, Any]]:
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    sql = "SELECT s FROM fb_t WHERE b > 5 AND s LIKE 'x1%'"
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        answer = http.post("/optimize", json={"sql": sql, "catalog": CATALOG, "detail": "full"}).json()
        scan = next(n["id"] for n in answer["cost"]["after"]["nodes"] if n["operator"] == "scan")
        assert (
            http.post(f"/feedback/{answer['request_id']}", json={"nodes": [{"id": scan, "rows_out": 77}]}).status_code
            == 200
        )
    app.state.history.close()
    return answer["request_id"], scan, answer


def test_explain_shows_estimated_actual_and_q_error(
    recorded: tuple[str, str, dict[str, Any]], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    request_id, scan, answer = recorded
    env = {**clean_env, "PUSHDOWN_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": os.getcwd()}
    shown = run(["explain", request_id], env)
    assert shown.returncode == 0, shown.stderr
    estimated = next(n["rows_out"] for n in answer["cost"]["after"]["nodes"] if n["id"] == scan)
    line = next(line for line in shown.stdout.splitlines() if line.startswith("scan") and f" {scan} " in line)
    assert "77" in line.split() and f"{max(estimated, 77) / min(estimated, 77):,.4g}" in line.split()
    as_json = json.loads(run(["explain", request_id, "--json"], env).stdout)
    (row,) = [r for r in as_json["feedback"]["nodes"] if r["id"] == scan]
    assert row["actual_rows"] == 77 and row["estimated_rows"] == estimated
    missing = run(["explain", "no-such-id"], env)
    assert missing.returncode == 2 and "no optimization 'no-such-id'" in missing.stderr
