"""The overview totals savings against rule-based pushdown (issue 13.5): each record keeps its baseline cost
(migration 7), records from before it show as such, and the dashboard's headline card is the baseline figure,
the written one labelled beside it (SQLite and PostgreSQL; real Chromium)."""

from __future__ import annotations

import dataclasses
import doctest
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import service.cli_savings
import service.history.record
import service.history.totals
from api.app import create_app
from service.history import Filters, HistoryStore, Record
from service.settings import Settings
from tests.history.conftest import seed
from tests.history.test_dashboard_browser import (  # noqa: F401 (fixtures)
    browser,
    card,
    cost,
    page_factory,
    percent,
    wait_loaded,
)
from tests.history.test_dashboard_magnitudes import overflowing
from tests.history.test_store import write_as_version_1
from tests.service.test_cli import run

BEFORE_BASELINES = 5  # the schema version before records kept their baseline


def old_and_new(store_url: str, records: list[Record]) -> tuple[HistoryStore, list[Record], list[Record]]:
    """The three newest records written by a version-5 release (no baseline column), the rest by this one."""
    old, new = records[-3:], records[:-3]
    assert all(r.cost_baseline is not None for r in records)  # today's answers carry the baseline
    assert HistoryStore.from_url(store_url).migrate(upto=BEFORE_BASELINES) == BEFORE_BASELINES
    write_as_version_1(store_url, old)
    store = HistoryStore.from_url(store_url)
    seed(store, new)  # migrates to the latest version first
    return store, old, new


def test_totals_count_the_baseline_only_where_it_was_recorded(store_url: str, seed_records: list[Record]) -> None:
    store, old, new = old_and_new(store_url, seed_records)
    totals = store.savings(Filters())["totals"]
    every = old + new
    baseline = sum(r.cost_baseline or 0.0 for r in new)
    after_new = sum(r.cost_after for r in new)
    assert totals["requests"] == len(every) and totals["with_baseline"] == len(new)
    assert totals["cost_baseline"] == pytest.approx(baseline)
    assert totals["saved_vs_baseline"] == pytest.approx(baseline - after_new, abs=1e-3)
    assert totals["savings_vs_baseline"] == pytest.approx(1 - after_new / baseline, abs=1e-6)
    before, after = sum(r.cost_before for r in every), sum(r.cost_after for r in every)
    assert totals["savings"] == totals["savings_vs_written"] == pytest.approx(1 - after / before, abs=1e-6)
    assert totals["savings_vs_baseline"] < totals["savings"]  # the query as written flatters: it is the lesser claim

    listed = {row["id"]: row for row in store.list(Filters(), limit=500)[0]}
    assert all(listed[r.id]["cost_baseline"] is None and listed[r.id]["savings_vs_baseline"] is None for r in old)
    for r in new:
        assert listed[r.id]["savings_vs_baseline"] == pytest.approx(1 - r.cost_after / (r.cost_baseline or 1), abs=1e-6)

    by_pipeline = store.savings(Filters())["by_pipeline"]
    assert sum(p["with_baseline"] for p in by_pipeline) == len(new)
    saved = [p["saved_vs_baseline"] or 0.0 for p in by_pipeline]
    assert saved == sorted(saved, reverse=True)  # ordered by what they saved against the baseline


def test_an_empty_history_has_no_baseline_figures(sqlite_url: str) -> None:
    totals = HistoryStore.from_url(sqlite_url).savings(Filters())["totals"]
    assert totals["requests"] == totals["with_baseline"] == 0
    assert totals["cost_baseline"] is None and totals["savings_vs_baseline"] is None and totals["savings"] == 0.0


def test_the_headline_card_is_the_baseline_figure_and_nothing_overflows(
    serve: Any,
    history_settings: Callable[..., Settings],
    seed_records: list[Record],
    page_factory: Callable[..., Any],  # noqa: F811
) -> None:
    settings = history_settings()
    store, old, new = old_and_new(settings.database_url or f"sqlite:///{settings.data_dir}/pushdown.db", seed_records)
    app = create_app(settings)
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        totals = http.get("/api/savings").json()["totals"]
        assert totals["with_baseline"] == len(new) and totals["requests"] == len(old) + len(new)
        for width in (1440, 390):
            page = page_factory(width, 900)
            page.goto(f"{url}/dashboard")
            wait_loaded(page)
            assert card(page, "savings") == percent(totals["savings_vs_baseline"])
            assert card(page, "cost-baseline") == cost(totals["cost_baseline"])
            assert card(page, "savings-written") == percent(totals["savings"])
            headline = page.locator('[data-testid="card-savings"]')
            assert headline.locator("h2").text_content() == "Savings vs rule-based"
            assert f"{len(old)} recorded without a baseline" in headline.locator(".sub").inner_text()
            assert page.locator('[data-testid="card-savings-written"] h2').text_content() == "Savings vs as written"
            assert overflowing(page) == []
            page.wait_for_selector("#recent tbody tr")
            assert page.locator("#recent tbody td:has-text('no baseline')").count() == len(old)


def test_an_old_record_without_a_baseline_says_so_in_the_drill_down(
    serve: Any,
    history_settings: Callable[..., Settings],
    seed_records: list[Record],
    page_factory: Callable[..., Any],  # noqa: F811
) -> None:
    settings = history_settings()
    url_of_store = settings.database_url or f"sqlite:///{settings.data_dir}/pushdown.db"
    record = without_baseline(seed_records[0])  # answered before the answer had a baseline at all
    assert HistoryStore.from_url(url_of_store).migrate(upto=BEFORE_BASELINES) == BEFORE_BASELINES
    write_as_version_1(url_of_store, [record])
    with serve(create_app(settings)) as url:
        page = page_factory(800, 900)
        page.goto(f"{url}/dashboard#/optimizations/{record.id}")
        page.wait_for_selector(f"body[data-drill='{record.id}']")
        assert page.locator("[data-testid=drill-savings-baseline]").inner_text() == "–"
        assert "no baseline recorded" in page.locator("#drill").inner_text()
        assert page.locator("[data-testid=drill-savings]").inner_text() == percent(record.savings)
        assert overflowing(page) == []


def without_baseline(record: Record) -> Record:
    response = json.loads(record.response_json)
    for key in ("baseline", "savings_vs_baseline", "savings_vs_written"):
        response["cost"].pop(key, None)
    return dataclasses.replace(record, response_json=json.dumps(response), cost_baseline=None)


@pytest.mark.parametrize("module", [service.history.totals, service.history.record, service.cli_savings])
def test_examples(module: Any) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_the_cli_leads_with_the_baseline_and_labels_the_written_savings(
    tmp_path: Path, clean_env: dict[str, str], seed_records: list[Record]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    store, old, new = old_and_new(f"sqlite:///{data / 'pushdown.db'}", seed_records)
    totals = store.savings(Filters())["totals"]
    store.close()
    env = {**clean_env, "PUSHDOWN_DATA_DIR": str(data), "PYTHONPATH": os.getcwd()}
    shown = run(["savings"], env)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert (
        lines[0]
        == f"requests: {len(seed_records)} ({len(old)} recorded without a rule-based baseline: written figures only)"
    )
    assert lines[1].startswith(
        f"savings: {totals['savings_vs_baseline'] * 100:.1f}% against rule-based pushdown (cost "
    )
    assert lines[2].startswith(f"savings against the query as written: {totals['savings'] * 100:.1f}% (cost ")
    assert "vs rule-based" in shown.stdout and "daily_cities" in shown.stdout
    as_json = json.loads(run(["savings", "--json", "--pipeline", "web_sessions"], env).stdout)
    assert as_json["totals"]["requests"] == sum(1 for r in seed_records if r.pipeline == "web_sessions")
    refused = run(["savings", "--from", "yesterday"], env)
    assert refused.returncode == 2 and "--from 'yesterday' is not a day" in refused.stderr
