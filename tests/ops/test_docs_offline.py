"""/docs renders in a real Chromium with every request off the service's own host refused (no internet)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.settings import Settings
from tests.history.test_dashboard_browser import CHROMIUM, CHROMIUM_ARGS

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")
Serve = Callable[[FastAPI], AbstractContextManager[str]]


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


def test_docs_render_with_the_network_off(browser: Any, serve: Serve, make_settings: Callable[..., Settings]) -> None:
    with serve(create_app(make_settings())) as url:
        context = browser.new_context()
        refused: list[str] = []
        own_host = urlparse(url).netloc

        def offline(route: Any) -> None:
            if urlparse(route.request.url).netloc == own_host:
                route.continue_()
            else:  # what a machine without internet access does to a CDN request
                refused.append(route.request.url)
                route.abort("internetdisconnected")

        context.route("**/*", offline)
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{url}/docs")
        page.wait_for_selector(".swagger-ui .info .title")
        assert "Pushdown decision service" in page.inner_text(".swagger-ui .info .title")
        operations = page.locator(".opblock-summary-path").all_inner_texts()
        assert {"/optimize", "/healthz", "/metrics"} <= {op.strip() for op in operations}
        assert refused == []
        context.close()


def test_docs_assets_are_served_and_nothing_else(serve: Serve, make_settings: Callable[..., Settings]) -> None:
    with serve(create_app(make_settings(api_token="t"))) as url:
        script = httpx.get(f"{url}/docs/assets/swagger-ui-bundle.js")  # public files: no token needed
        assert script.status_code == 200 and "SwaggerUIBundle" in script.text[:2000]
        assert httpx.get(f"{url}/docs/assets/swagger-ui.css").status_code == 200
        for name in ("..%2Fapp.py", "redoc.standalone.js", "missing.js"):
            assert httpx.get(f"{url}/docs/assets/{name}").status_code == 404
        page = httpx.get(f"{url}/docs", headers={"Authorization": "Bearer t"}).text
        assert "cdn" not in page.lower() and "/docs/assets/swagger-ui-bundle.js" in page
