"""A DataFrame run on the dashboard, in real Chromium, as a SQL run is: listed as a DataFrame with its plan summary
and leaves, and its drill-down shows the plan before and after as trees, the answer's Spark SQL, and the actual
rows the run reported. The run is real: ``run_dataframe`` on local Spark against a served app with its history."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from pushdown_client import PushdownClient
from pushdown_client.dataframe import run_dataframe
from pushdown_client.spark_runner import run_sql
from service.settings import Settings
from tests.feedback.conftest import CATALOG, Tables
from tests.feedback.test_dataframe_feedback import pipeline
from tests.history.test_dashboard_browser import CHROMIUM, CHROMIUM_ARGS

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")

Serve = Callable[[FastAPI], AbstractContextManager[str]]
SQL = (
    "SELECT t.s, count(*) AS count FROM fb_t t JOIN (SELECT a AS ua, c FROM fb_u) u ON t.a = u.ua "
    "WHERE t.b > 5 AND u.c = 'c7' GROUP BY t.s"
)


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


def test_a_dataframe_run_shows_its_plan_trees_its_spark_sql_and_its_rows(
    spark: Any, tables: Tables, serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path, browser: Any
) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    udf = F.udf(lambda s: s is not None and len(s) % 2 == 0, BooleanType())
    kept = sum(1 for r in tables.t if r[1] is not None and r[1] > 5)
    statistics = {"tables": {"t": CATALOG["tables"]["fb_t"], "u": CATALOG["tables"]["fb_u"]}}
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        client = PushdownClient(url)
        context = {"pipeline": "nightly", "task": "scores", "run": "2026-11-29"}
        run = run_dataframe(
            pipeline(spark, tables, udf),
            client=client,
            min_time_saved_s=0,  # test data: milliseconds saved, below the runner's default floor
            functions={udf: {"cost": 5000}},
            catalog=statistics,
            context=context,
        )
        assert not run.as_written  # the UDF is kept above the join: the answer's Spark SQL is what ran
        run.collect()
        assert run.actual is not None and run.actual.nodes
        sql_run = run_sql(spark, SQL, client=client, catalog=CATALOG, context={**context, "task": "scores_sql"})
        sql_run.collect()
        answer = run.answer
        record = http.get(f"/api/optimizations/{answer['request_id']}").json()
        assert record["origin"] == "dataframe" and record["input_form"] == "plan"
        scan = next(n for n in record["feedback"]["nodes"] if n["operator"] == "scan" and n["actual_rows"] == kept)

        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.set_default_timeout(15_000)
        page.goto(f"{url}/dashboard")
        page.wait_for_selector("body[data-loaded=true]")

        # Listed as a DataFrame, beside the SQL run: its plan's operators and its leaves (the runner's tables).
        row = page.locator(f'#recent tbody tr[data-id="{answer["request_id"]}"]')
        assert row.locator(".badge.form").text_content() == "dataframe"
        assert row.locator(".query-text").inner_text().startswith("dataframe: Projection > Aggregate")
        leaves = sorted(row.locator(".chip").all_inner_texts())
        assert len(leaves) == 2 and all(name.startswith("__pushdown_") for name in leaves), leaves
        sql_row = page.locator(f'#recent tbody tr[data-id="{sql_run.answer["request_id"]}"]')
        assert sql_row.locator(".badge.form").text_content() == "sql"

        # The drill-down: both plan trees node for node, the kept UDF filter in the tree after, the Spark SQL.
        row.click()
        page.wait_for_selector(f"body[data-drill='{answer['request_id']}']")
        cost = answer["cost"]
        assert page.locator(".tree-before .node").count() == len(cost["before"]["nodes"])
        assert page.locator(".tree-after .node").count() == len(cost["after"]["nodes"])
        join = next(n["id"] for n in cost["after"]["nodes"] if n["operator"] == "join")
        udf_filter = page.locator('.tree-after li:has(> .node .label:text-matches("^Filter: __pushdown_udf_"))')
        assert udf_filter.count() == 1
        assert udf_filter.locator(f'.node[data-node="{join}"]').count() == 1  # the join is below the UDF's filter
        scan_node = page.locator(f'.tree-after .node[data-node="{scan["id"]}"]').inner_text()
        assert "filters=[t1.b > 5]" in scan_node, scan_node
        assert page.locator(".sql-after").inner_text().strip() == answer["spark"]["sql"].strip()
        assert "PySpark DataFrame" in page.locator("#sent-as").inner_text()
        assert "dataframe (as a plan)" in page.locator("#drill-meta").inner_text()

        # The rows the run reported, beside the estimates.
        cells = page.locator(f'#actual-rows tr[data-node="{scan["id"]}"] td').all_inner_texts()
        assert cells[1] == "scan" and cells[3] == f"{kept:,}", cells
        page.screenshot(path=str(tmp_path / "drill-dataframe.png"), full_page=True)
