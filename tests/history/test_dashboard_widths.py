"""The dashboard at 1280, 1440 and 1920 pixels: nothing clipped, nothing scrolls sideways, and an optimization's
own page says its mode and statistics and what its q-error chart is waiting for. Screenshots are saved per width
(in the test's temporary directory)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.app import create_app
from service.history import Record
from service.settings import Settings
from tests.history.conftest import seed
from tests.history.test_dashboard_browser import Serve, browser, page_factory, wait_loaded

__all__ = ["browser", "page_factory"]  # the fixtures, used by name

#: Elements whose text is cut on purpose (an ellipsis, the whole text in ``title``) are not clipping.
CLIPPED = """(selector) => {
    const out = [];
    for (const el of document.querySelectorAll(selector)) {
        const style = getComputedStyle(el);
        if (style.textOverflow === "ellipsis" || el.offsetParent === null) continue;
        if (el.scrollWidth > el.clientWidth + 1)
            out.push(`${el.className}: ${el.innerText.slice(0, 40)} (${el.scrollWidth}>${el.clientWidth})`);
    }
    return out;
}"""


def clipped(page: Any, selector: str) -> list[str]:
    return page.evaluate(CLIPPED, selector)


def no_sideways_scroll(page: Any) -> None:
    page.wait_for_function("document.documentElement.scrollWidth <= window.innerWidth", timeout=5_000)
    wrap = page.evaluate(
        "[...document.querySelectorAll('.table-wrap')].filter(w => w.offsetParent !== null)"
        ".map(w => [w.scrollWidth, w.clientWidth])"
    )
    assert all(scroll <= client + 1 for scroll, client in wrap), wrap


@pytest.mark.parametrize("width", [1280, 1440, 1920])
def test_nothing_is_clipped_from_1280_to_1920_pixels(
    width: int,
    serve: Serve,
    history_settings: Callable[..., Settings],
    seed_records: list[Record],
    page_factory: Callable[..., Any],
    tmp_path: Path,
) -> None:
    app = create_app(history_settings())
    seed(app.state.history.store, seed_records)
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        page = page_factory(width, 1000)
        page.goto(f"{url}/dashboard")
        wait_loaded(page)
        no_sideways_scroll(page)
        assert clipped(page, "#recent td, #recent th, .card .value, .card .sub") == []
        savings = page.locator("#recent tbody tr td:nth-child(9)").all_inner_texts()
        assert savings and all(text.endswith("%") or text == "no baseline" for text in savings), savings
        button = page.locator("#find-id button")  # the "Open" button stands out from the bar it sits on
        colors = button.evaluate("b => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]")
        assert colors[0] != colors[1] and colors[0] not in ("rgba(0, 0, 0, 0)", "transparent"), colors
        page.screenshot(path=str(tmp_path / f"dashboard-{width}.png"), full_page=True)

        target = next(r for r in sorted(seed_records, key=lambda r: r.created_at, reverse=True) if r.pipeline)
        record = http.get(f"/api/optimizations/{target.id}").json()
        page.locator(f'#recent tbody tr[data-id="{target.id}"]').click()
        page.wait_for_selector(f"body[data-drill='{target.id}']")
        meta = page.locator("#drill-meta").inner_text()
        assert "mode —" not in meta and "statistics []" not in meta, meta
        assert f"mode {record['mode'] or 'cost (default)'}" in meta
        empty = page.locator("#chart-qerror").locator("xpath=..").inner_text()
        assert "No optimizations in this range" not in empty
        if not http.get("/api/feedback/runs", params={"pipeline": target.pipeline, "task": target.task}).json():
            assert "No run of this task has reported feedback yet" in empty
        assert clipped(page, "#drill td:not(.wrap), #drill .card .value") == []
        page.screenshot(path=str(tmp_path / f"dashboard-drilldown-{width}.png"), full_page=True)
        assert (tmp_path / f"dashboard-{width}.png").stat().st_size > 10_000
