"""The dashboard in a real browser: Debian's headless Chromium driven by Playwright (no browser download).

Seeds a history of real engine answers over ten days, opens ``/dashboard``, checks the cards against the
API, that each chart drew, the filters, a drill-down, the login form when a token is set, and that the page
fits a laptop screen. Its screenshots go to a temporary directory; ``PUSHDOWN_REFRESH_DOCS_IMAGES=1`` writes them
to ``docs/dashboard.png`` and ``docs/dashboard-drilldown.png`` instead, to refresh the README's pictures (a plain
test run leaves the tracked files alone)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.history import Record
from service.settings import Settings
from tests.history.conftest import seed

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")

CHROMIUM = os.environ.get("PUSHDOWN_CHROMIUM", "/usr/bin/chromium")
#: As the machine notes say: without the background-networking flags Chromium keeps dialing out on a closed network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DOCS = Path(__file__).resolve().parents[2] / "docs"
#: Set to 1 to write the screenshots over the README's pictures in docs/.
REFRESH_DOCS_IMAGES = "PUSHDOWN_REFRESH_DOCS_IMAGES"


def screenshot_dir(tmp_path: Path) -> Path:
    """Where the screenshots go: docs/ when asked to refresh the README's pictures, else this test's temp dir."""
    return DOCS if os.environ.get(REFRESH_DOCS_IMAGES) == "1" else tmp_path


Serve = Callable[[FastAPI], AbstractContextManager[str]]


def grouped(value: float, places: int = 0) -> str:
    """Like the page: thousands separators, halves rounded away from zero."""
    exponent = Decimal(1).scaleb(-places)
    return f"{Decimal(str(value)).quantize(exponent, rounding=ROUND_HALF_UP):,}"


def percent(value: float) -> str:
    return grouped(value * 100, 1) + "%"


def cost(value: float) -> str:
    """Like the page: grouped below ten thousand, then three significant digits with k, M, G, T, then 1.29e25."""
    if abs(value) < 1e4:
        return grouped(value) if abs(value) >= 100 else grouped(value, 2).rstrip("0").rstrip(".")
    if abs(value) >= 1e15:
        return f"{value:.2e}".replace("e+", "e")
    size, unit = next((s, u) for s, u in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")) if abs(value) >= s)
    return f"{float(f'{value / size:.3g}'):g}" + unit


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


@pytest.fixture
def page_factory(browser: Any) -> Iterator[Callable[..., Any]]:
    contexts: list[Any] = []

    def new_page(width: int = 1440, height: int = 900) -> Any:
        context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        return page

    yield new_page
    for context in contexts:
        context.close()


def canvas_ink(page: Any, canvas_id: str) -> int:
    """How many pixels of the chart's canvas are painted (0: nothing drawn)."""
    return page.evaluate(
        """(id) => {
            const c = document.getElementById(id);
            const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
            return n;
        }""",
        canvas_id,
    )


def card(page: Any, name: str) -> str:
    return page.locator(f'[data-testid="card-{name}"] .value').inner_text()


def wait_loaded(page: Any) -> None:
    page.wait_for_selector("body[data-loaded=true]")


def check_cards(page: Any, totals: dict[str, Any]) -> None:
    assert card(page, "requests") == grouped(totals["requests"])
    assert card(page, "cost-baseline") == cost(totals["cost_baseline"])
    assert card(page, "cost-after") == cost(totals["cost_after"])
    assert card(page, "savings") == percent(totals["savings_vs_baseline"])  # the headline: against rule-based
    assert card(page, "savings-written") == percent(totals["savings"])
    saved = float(page.locator('[data-field="saved_vs_baseline"]').get_attribute("data-value"))
    assert saved == pytest.approx(totals["saved_vs_baseline"])
    written = float(page.locator('[data-field="cost_before"]').get_attribute("data-value"))
    assert written == pytest.approx(totals["cost_before"])


def test_dashboard_shows_the_history(
    serve: Serve,
    history_settings: Callable[..., Settings],
    seed_records: list[Record],
    page_factory: Callable[..., Any],
    tmp_path: Path,
) -> None:
    shots = screenshot_dir(tmp_path)
    pictures = [DOCS / "dashboard.png", DOCS / "dashboard-drilldown.png"]
    tracked = {path: path.stat().st_mtime_ns for path in pictures if path.exists()}
    app = create_app(history_settings())
    seed(app.state.history.store, seed_records)
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        savings = http.get("/api/savings").json()
        page = page_factory()
        page.goto(f"{url}/dashboard")
        wait_loaded(page)

        # The cards say what the API says, readably.
        check_cards(page, savings["totals"])
        assert re.fullmatch(r"[\d,.]+[kMGT]?|\d\.\d+e\d+", card(page, "cost-baseline"))
        decisions = page.locator('[data-field="decisions"]').inner_text()
        assert f"{savings['totals']['blocked']} blocked" in decisions

        # Each chart drew, with one bar per day, pipeline and reason.
        for canvas, series in (
            ("chart-daily", "by_day"),
            ("chart-pipelines", "by_pipeline"),
            ("chart-reasons", "reasons"),
        ):
            assert page.locator(f"#{canvas}").get_attribute("data-rendered") == str(len(savings[series]))
            assert canvas_ink(page, canvas) > 2000, canvas
        labels = page.evaluate("Chart.getChart('chart-reasons').data.labels")
        assert "blocked · limit" in labels and "kept · not_beneficial" in labels

        # The table lists the newest page.
        rows = page.locator("#recent tbody tr")
        assert rows.count() == min(20, len(seed_records))
        newest = max(seed_records, key=lambda r: r.created_at)
        assert rows.first.get_attribute("data-id") == newest.id
        assert page.locator("#recent-count").inner_text() == f"1–20 of {len(seed_records)}"

        # It fits a laptop screen: nothing scrolls sideways.
        page.set_viewport_size({"width": 1280, "height": 800})
        # (the charts follow the new width on their next resize callback: wait for it rather than read at once)
        page.wait_for_function("document.documentElement.scrollWidth <= window.innerWidth", timeout=5_000)
        page.set_viewport_size({"width": 1440, "height": 900})
        page.screenshot(path=str(shots / "dashboard.png"), full_page=True)

        # Filters: a pipeline, then a date range, each narrowing cards and table the way the API does.
        page.select_option("#f-pipeline", "web_sessions")
        page.wait_for_function("document.querySelector('#recent tbody tr')?.dataset.id !== undefined")
        expected = http.get("/api/savings", params={"pipeline": "web_sessions"}).json()["totals"]
        page.wait_for_function(
            f"document.querySelector('[data-field=requests]').dataset.value === '{expected['requests']}'"
        )
        check_cards(page, expected)
        assert set(page.locator("#recent tbody tr td:nth-child(2)").all_inner_texts()) == {"web_sessions"}
        assert "pipeline=web_sessions" in page.url
        page.select_option("#f-pipeline", "")
        page.fill("#f-from", "2026-11-18")
        page.fill("#f-to", "2026-11-19")
        page.locator("#f-to").dispatch_event("change")
        expected = http.get("/api/savings", params={"from": "2026-11-18", "to": "2026-11-19"}).json()["totals"]
        page.wait_for_function(
            f"document.querySelector('[data-field=requests]').dataset.value === '{expected['requests']}'"
        )
        check_cards(page, expected)
        assert page.evaluate("Chart.getChart('chart-daily').data.labels") == ["2026-11-18", "2026-11-19"]
        page.fill("#f-from", "")
        page.fill("#f-to", "")
        page.locator("#f-to").dispatch_event("change")
        page.wait_for_function(
            f"document.querySelector('[data-field=requests]').dataset.value === '{len(seed_records)}'"
        )

        # Drill-down of a SQL optimization: both plan trees, the decision log with its numbers, the estimates.
        target = next(
            r for r in sorted(seed_records, key=lambda r: r.created_at, reverse=True) if r.input_form == "sql"
        )
        record = http.get(f"/api/optimizations/{target.id}").json()
        page.locator(f'#recent tbody tr[data-id="{target.id}"]').click()
        page.wait_for_selector(f"body[data-drill='{target.id}']")
        assert page.url.endswith(f"#/optimizations/{target.id}")
        cost_nodes = record["response"]["cost"]
        assert page.locator(".tree-before .node").count() == len(cost_nodes["before"]["nodes"])
        assert page.locator(".tree-after .node").count() == len(cost_nodes["after"]["nodes"])
        first_scan = next(n for n in cost_nodes["after"]["nodes"] if n["operator"] == "scan")
        scan_node = page.locator(f'.tree-after .node[data-node="{first_scan["id"]}"]').inner_text()
        assert f"cost {cost(first_scan['cost'])}" in scan_node.replace("\n", " ")
        assert page.locator(".tree-before .node.changed").count() >= 1  # what the pushdown changed stands out

        headers = page.locator("#decision-log thead th").all_inner_texts()
        assert headers[4:8] == ["p", "r", "r1", "What decided"]
        log_rows = page.locator("#decision-log tbody tr")
        decisions = record["response"]["decisions"]
        assert log_rows.count() == len(decisions)
        costed = next(i for i, d in enumerate(decisions) if d.get("lhs") is not None)
        cells = log_rows.nth(costed).locator("td").all_inner_texts()
        d = decisions[costed]
        assert cells[4:7] == [f"{d['p']:.3f}", f"{d['r']:.3f}", f"{d['r1']:.3f}"]
        # what decided, named, and the local rule beside it (agreeing or overruled), never a bare "holds"
        assert cells[7].startswith("decided by "), cells[7]
        assert f"1 − r = {d['lhs']:.3f} {'≤' if d['lhs'] <= d['rhs'] else '>'} p·r1 = {d['rhs']:.3f}" in cells[7]
        if d.get("cost_if_kept") is not None and d.get("cost_if_pushed") is not None:
            assert cells[7].startswith("decided by total cost: cost if pushed = ")
            assert "local rule agrees: " in cells[7] or "(overruled)" in cells[7]
        blocked = next(i for i, d in enumerate(decisions) if d["action"] == "blocked")
        assert "not_on_group_keys" in log_rows.nth(blocked).inner_text()

        estimates = page.locator("#estimates tbody tr")
        assert estimates.count() == len(record["response"]["estimates"])
        sources = {e["source"] for e in record["response"]["estimates"]}
        assert sources <= set(page.locator("#estimates .badge.source").all_inner_texts())
        assert page.locator("[data-testid=drill-savings]").inner_text() == percent(record["savings"])
        assert "HAVING" in page.locator("#drill-content").inner_text()
        page.screenshot(path=str(shots / "dashboard-drilldown.png"))
        assert all((shots / path.name).stat().st_size > 10_000 for path in pictures)
        if shots != DOCS:  # a plain run leaves the README's pictures as they are
            assert {path: path.stat().st_mtime_ns for path in pictures if path.exists()} == tracked

        page.keyboard.press("Escape")
        page.wait_for_selector("#drill", state="hidden")

        # The drill-down is linkable.
        linked = page_factory()
        linked.goto(f"{url}/dashboard#/optimizations/{target.id}")
        linked.wait_for_selector(f"body[data-drill='{target.id}']")


def test_dashboard_asks_for_the_token(
    serve: Serve,
    history_settings: Callable[..., Settings],
    seed_records: list[Record],
    page_factory: Callable[..., Any],
) -> None:
    app = create_app(history_settings(api_token="s3cret"))
    seed(app.state.history.store, seed_records[:5])
    with serve(app) as url:
        page = page_factory(1280, 800)
        page.goto(f"{url}/dashboard")
        page.wait_for_selector("#login-form", state="visible")
        assert page.locator('[data-field="requests"]').inner_text() == "–"  # nothing shown without the token
        page.fill("#login-token", "wrong")
        page.click("#login-form button[type=submit]")
        page.wait_for_selector("#login-error", state="visible")
        page.fill("#login-token", "s3cret")
        page.click("#login-form button[type=submit]")
        wait_loaded(page)
        assert card(page, "requests") == "5"

        # Signed in by an HttpOnly cookie: the page's script cannot read it, a reload keeps the session,
        # and signing out ends it.
        assert page.evaluate("document.cookie") == ""
        page.reload()
        wait_loaded(page)
        assert page.locator("#login").is_hidden() and page.locator("#logout").is_visible()
        page.click("#logout")
        page.wait_for_selector("#login-form", state="visible")

        # A token in the URL is refused, never taken (it would land in access logs and browser history).
        other = page_factory(1280, 800)
        answer = other.goto(f"{url}/dashboard?token=s3cret&pipeline=daily_cities")
        assert answer is not None and answer.status == 400


@pytest.mark.skipif(shutil.which("chromium") is None and not Path(CHROMIUM).exists(), reason="no Chromium")
def test_an_empty_history_still_looks_finished(
    serve: Serve, history_settings: Callable[..., Settings], page_factory: Callable[..., Any]
) -> None:
    with serve(create_app(history_settings())) as url:
        page = page_factory(1280, 800)
        page.goto(f"{url}/dashboard")
        wait_loaded(page)
        assert card(page, "requests") == "0" and card(page, "savings") == "–"  # no baseline to save against
        assert card(page, "savings-written") == "0.0%"
        assert "No optimizations recorded" in page.locator("#recent").inner_text()
        assert page.locator(".empty-chart").count() == 3
