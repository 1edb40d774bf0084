"""The drill-down in real Chromium: estimated against actual rows per node, and the task's q-error over runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.settings import Settings
from tests.feedback.conftest import CATALOG
from tests.history.test_dashboard_browser import CHROMIUM, CHROMIUM_ARGS, canvas_ink

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")

Serve = Callable[[FastAPI], AbstractContextManager[str]]
SQL = "SELECT s, count(*) AS n FROM fb_t WHERE b > 5 AND s LIKE 'x1%' GROUP BY s"
RUNS = 5


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: run scripts/ci-setup.sh (apt-get install chromium)")
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def test_drill_down_shows_actual_rows_and_the_q_error_chart(
    serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path, browser: Any
) -> None:
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        answers = []
        for run in range(RUNS):
            context = {"pipeline": "daily", "task": "load", "run": f"2026-11-{10 + run}"}
            answer = http.post(
                "/optimize", json={"sql": SQL, "catalog": CATALOG, "context": context, "detail": "full"}
            ).json()
            scan = next(n for n in answer["cost"]["after"]["nodes"] if n["operator"] == "scan")
            actual = 100 + 40 * run
            body = {"nodes": [{"id": scan["id"], "rows_out": actual}]}
            assert http.post(f"/feedback/{answer['request_id']}", json=body).status_code == 200
            answers.append((answer, scan, actual))
        last, scan, actual = answers[-1]
        record = http.get(f"/api/optimizations/{last['request_id']}").json()
        expected = {r["id"]: r for r in record["feedback"]["nodes"]}

        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.set_default_timeout(15_000)
        page.goto(f"{url}/dashboard#/optimizations/{last['request_id']}")
        page.wait_for_selector("#actual-rows tbody tr[data-node]")
        row = page.locator(f'#actual-rows tr[data-node="{scan["id"]}"] td')
        cells = [row.nth(i).inner_text() for i in range(5)]
        assert cells[0] == scan["id"] and cells[1] == "scan"
        assert cells[3] == str(actual)
        assert float(cells[4]) == pytest.approx(expected[scan["id"]]["q_error"], abs=0.006)
        assert page.locator("#actual-rows tbody tr").count() == len(expected)

        page.wait_for_function(f"document.getElementById('chart-qerror')?.dataset.rendered === '{RUNS}'")
        assert canvas_ink(page, "chart-qerror") > 500
        page.screenshot(path=str(tmp_path / "drill-feedback.png"), full_page=True)
