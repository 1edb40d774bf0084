"""The dashboard's overview in Chromium: each optimization's query (or plan summary) and tables, filters by
pipeline, task and time range, and opening an optimization from its request id."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from service.settings import Settings
from tests.history.test_dashboard_browser import browser, page_factory  # noqa: F401  (fixtures)
from tests.service.test_cli import REQUEST

Serve = Callable[[FastAPI], AbstractContextManager[str]]
CATALOG = {
    "tables": {
        "orders": {"columns": [{"name": "id", "type": "int"}, {"name": "total", "type": "int"}], "row_count": 5000},
        "items": {"columns": [{"name": "order_id", "type": "int"}, {"name": "qty", "type": "int"}], "row_count": 90000},
    }
}
SQL = "SELECT o.id, i.qty FROM orders o JOIN items i ON o.id = i.order_id WHERE o.total > 100 AND i.qty < 3"
CONTEXTS = [("etl", "load"), ("etl", "load"), ("etl", "clean"), ("reports", "daily")]


@pytest.fixture
def history(serve: Serve, make_settings: Callable[..., Settings]) -> Any:
    """A live service with real answers recorded: SQL under three contexts, a plan under a fourth."""
    app = create_app(make_settings())
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        ids = []
        for i, (pipeline, task) in enumerate(CONTEXTS):
            context = {"pipeline": pipeline, "task": task, "run": f"r{i}"}
            body = (
                {**REQUEST, "context": context}
                if pipeline == "reports"
                else {"sql": SQL, "catalog": CATALOG, "context": context}
            )
            response = http.post("/optimize", json=body)
            assert response.status_code == 200, response.text
            ids.append(response.json()["request_id"])
        assert app.state.history.flush(timeout=10)
        yield url, http, ids


def rows(page: Any) -> list[dict[str, Any]]:
    out = []
    for row in page.locator("#recent tbody tr[data-id]").all():
        cells = row.locator("td").all_inner_texts()
        out.append(
            {
                "id": row.get_attribute("data-id"),
                "pipeline": cells[1],
                "task": cells[2],
                "query": row.locator(".query-text").inner_text(),
                "tables": row.locator(".chip").all_inner_texts(),
            }
        )
    return out


def wait_rows(page: Any, count: int) -> None:
    page.wait_for_function(f"document.querySelectorAll('#recent tbody tr[data-id]').length === {count}")


def test_overview_shows_queries_and_tables_and_filters_by_pipeline_task_and_time(
    history: Any,
    page_factory: Callable[..., Any],  # noqa: F811
) -> None:
    url, http, ids = history
    page = page_factory(1280, 800)
    page.goto(f"{url}/dashboard")
    page.wait_for_selector("body[data-loaded=true]")
    wait_rows(page, 4)
    listed = {row["id"]: row for row in rows(page)}
    sql_row = listed[ids[0]]
    assert sql_row["query"].startswith("SELECT o.id, i.qty FROM orders o JOIN items i")
    assert sql_row["tables"] == ["items", "orders"]
    plan_row = listed[ids[3]]
    assert plan_row["query"] == "plan: Projection > Filter > TableScan (1 scan)" and plan_row["tables"] == ["cities"]
    # still fits a laptop screen with the new column
    page.wait_for_function("document.documentElement.scrollWidth <= window.innerWidth", timeout=5_000)

    # pipeline, then one of its tasks: the table and the URL follow, and the task list is the pipeline's
    page.select_option("#f-pipeline", "etl")
    wait_rows(page, 3)
    assert sorted(page.locator("#f-task option").all_inner_texts()) == ["All tasks", "clean", "load"]
    page.select_option("#f-task", "load")
    wait_rows(page, 2)
    assert {(r["pipeline"], r["task"]) for r in rows(page)} == {("etl", "load")}
    assert "pipeline=etl" in page.url and "task=load" in page.url
    api_total = http.get("/api/optimizations", params={"pipeline": "etl", "task": "load"}).json()["total"]
    assert api_total == 2

    # a time range with nothing in it, then back to today
    tomorrow = (dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)).isoformat()
    page.fill("#f-from", tomorrow)
    page.locator("#f-from").dispatch_event("change")
    wait_rows(page, 0)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    page.fill("#f-from", today)
    page.fill("#f-to", today)
    page.locator("#f-to").dispatch_event("change")
    wait_rows(page, 2)

    # a request id (as an answer or a log line gives it) opens that optimization
    page.fill("#f-id", ids[2])
    page.press("#f-id", "Enter")
    page.wait_for_selector(f"body[data-drill='{ids[2]}']")
    assert page.locator("#drill-title").inner_text() == "etl / clean / r2"


def test_a_link_with_a_request_id_opens_the_optimization(history: Any, page_factory: Callable[..., Any]) -> None:  # noqa: F811
    url, _, ids = history
    page = page_factory()
    page.goto(f"{url}/dashboard?task=daily#/optimizations/{ids[3]}")
    page.wait_for_selector(f"body[data-drill='{ids[3]}']")
    assert page.locator("#drill-title").inner_text() == "reports / daily / r3"
    assert page.locator("#f-task").input_value() == "daily"
