"""The dashboard's cards stay readable and inside their boxes at any magnitude, up to a cross product's 1e25
cost units (real Chromium, as tests/history/test_dashboard_browser.py drives it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from api.app import create_app
from service.history import build_record
from service.optimize import OptimizeInput, OptimizeService
from service.settings import Settings
from tests.history.conftest import seed
from tests.history.requests import MIX, request
from tests.history.test_dashboard_browser import browser, card, page_factory, wait_loaded  # noqa: F401 (fixtures)


def huge_record(before: float, after: float, baseline: float | None = None) -> Any:
    """A recorded answer with these costs: ``baseline`` None keeps the answer's own (the rule-based plan's)."""
    kind, pipeline, task = MIX[0]
    body = request(kind, pipeline, task, "run-huge")
    answer = OptimizeService().optimize(OptimizeInput(**body))
    answer["cost"]["before"]["total"], answer["cost"]["after"]["total"] = before, after
    answer["cost"]["savings"] = answer["cost"]["savings_vs_written"] = 1 - after / before
    if baseline is not None:
        answer["cost"]["baseline"]["total"] = baseline
        answer["cost"]["savings_vs_baseline"] = 1 - after / baseline
    return build_record(body, answer)


def overflowing(page: Any) -> list[str]:
    """Cards whose content is wider than the card, or whose value is wider than its box."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.card')].filter((c) => {
            const v = c.querySelector('.value');
            return c.scrollWidth > c.clientWidth + 1 || (v && v.scrollWidth > v.clientWidth + 1);
        }).map((c) => c.dataset.testid)"""
    )


@pytest.mark.parametrize(
    ("before", "shown"), [(1.29e25, "1.29e25"), (8.4e13, "84T"), (4.56e6, "4.56M"), (84_050, "84.1k")]
)
@pytest.mark.parametrize("width", [1440, 800, 390])
def test_cards_fit_at_any_magnitude(
    serve: Any,
    history_settings: Callable[..., Settings],
    page_factory: Callable[..., Any],  # noqa: F811
    before: float,
    shown: str,
    width: int,
) -> None:
    app = create_app(history_settings())
    seed(app.state.history.store, [huge_record(before * 1e4, before / 1e3, baseline=before)])
    with serve(app) as url:
        page = page_factory(width, 900)
        page.goto(f"{url}/dashboard")
        wait_loaded(page)
        assert card(page, "cost-baseline") == shown
        assert card(page, "savings") == "99.9%"  # against the baseline
        assert card(page, "savings-written") == "100.0%"
        assert overflowing(page) == []


def test_drill_down_leads_with_savings_against_rule_based_pushdown(
    serve: Any,
    history_settings: Callable[..., Settings],
    page_factory: Callable[..., Any],  # noqa: F811
) -> None:
    record = huge_record(1.29e25, 4.2e6)
    response = json.loads(record.response_json)
    assert response["cost"]["baseline"]["total"] > 0  # recorded answers carry the baseline
    app = create_app(history_settings())
    seed(app.state.history.store, [record])
    with serve(app) as url:
        page = page_factory(800, 900)
        page.goto(f"{url}/dashboard#/optimizations/{record.id}")
        page.wait_for_selector(f"body[data-drill='{record.id}']")
        shown = page.locator("[data-testid=drill-savings-baseline]").inner_text()
        assert shown == f"{response['cost']['savings_vs_baseline'] * 100:.1f}%"
        assert page.locator("[data-testid=drill-savings]").inner_text() == "100.0%"
        assert overflowing(page) == []
