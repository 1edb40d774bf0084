"""A DataFrame run reports its actual rows per node of the answer's plan as a SQL run does, after the temporary
names its leaves had while the answer's SQL was analyzed are gone; and a run as written reports too."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from pushdown_client import PushdownClient
from pushdown_client.dataframe import run_dataframe
from service.settings import Settings
from tests.feedback.conftest import CATALOG, Tables

pytestmark = pytest.mark.slow
Serve = Callable[[FastAPI], AbstractContextManager[str]]


def pipeline(spark: Any, tables: Tables, udf: Any | None) -> Any:
    from pyspark.sql import functions as F

    t = spark.read.parquet(str(tables.root / "t"))
    u = spark.read.parquet(str(tables.root / "u")).withColumnRenamed("a", "ua")
    joined = t.filter(F.col("b") > 5).join(u.filter(F.col("c") == "c7"), F.col("a") == F.col("ua"))
    if udf is not None:
        joined = joined.filter(udf(F.col("s")))
    return joined.groupBy("s").count()


def test_a_dataframe_run_reports_its_rows(
    spark: Any, tables: Tables, serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    udf = F.udf(lambda s: s is not None and len(s) % 2 == 0, BooleanType())
    truth = sum(1 for r in tables.t if r[1] is not None and r[1] > 5)
    statistics = {"tables": {"t": CATALOG["tables"]["fb_t"], "u": CATALOG["tables"]["fb_u"]}}
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        client = PushdownClient(url)
        for expensive in (udf, None):
            df = pipeline(spark, tables, expensive)
            run = run_dataframe(
                df, client=client, functions={udf: {"cost": 5000}}, catalog=statistics, min_time_saved_s=0
            )
            assert run.as_written is (expensive is None)
            run.collect()
            assert run.actual is not None
            assert not [t for t in spark.catalog.listTables() if t.name.startswith("__pushdown_")]
            stored = http.get(f"/api/optimizations/{run.answer['request_id']}").json()["feedback"]
            assert any(n["operator"] == "scan" and n["actual_rows"] == truth for n in stored["nodes"]), stored


def test_the_next_optimize_of_the_same_pipeline_estimates_from_the_rows_a_dataframe_run_reported(
    spark: Any, tables: Tables, serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    """Two runs of one DataFrame pipeline, as a daily task would: the first run's counts are in the history per
    node (the filtered scan, the join, the aggregate), and the second answer's estimate of the scan's filter is
    the selectivity the first run observed, not the default the first answer had."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    udf = F.udf(lambda s: s is not None and len(s) % 2 == 0, BooleanType())
    kept = sum(1 for r in tables.t if r[1] is not None and r[1] > 5)
    statistics = {"tables": {"t": CATALOG["tables"]["fb_t"], "u": CATALOG["tables"]["fb_u"]}}
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    answers = []
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        client = PushdownClient(url)
        for day in ("2026-11-22", "2026-11-23"):
            df = pipeline(spark, tables, udf)
            run = run_dataframe(
                df,
                client=client,
                min_time_saved_s=0,  # test data: milliseconds saved, below the runner's default floor
                functions={udf: {"cost": 5000}},
                catalog=statistics,
                context={"pipeline": "nightly", "task": "dataframe", "run": day},
            )
            groups = run.collect()
            assert run.actual is not None and run.actual.nodes, run.actual
            answers.append((run.answer, len(groups)))
        recorded = http.get(f"/api/optimizations/{answers[0][0]['request_id']}").json()["feedback"]

    t = spark.read.parquet(str(tables.root / "t")).filter(F.col("b") > 5)
    u = spark.read.parquet(str(tables.root / "u")).filter(F.col("c") == "c7")
    joined = t.join(u, t["a"] == u["a"]).count()
    actual = {n["operator"]: n["actual_rows"] for n in recorded["nodes"] if n["actual_rows"] is not None}
    assert actual.get("scan") == kept and actual.get("join") == joined, recorded
    assert actual.get("aggregate") == answers[0][1], recorded

    first, second = ({e["predicate"]: e for e in answer["estimates"]}["t1.b > 5"] for answer, _ in answers)
    assert first["source"] != "feedback"
    assert second["source"] == "feedback" and second["matched"] == "predicate" and second["observations"] == 1
    assert second["selectivity"] == pytest.approx(kept / len(tables.t), abs=1e-6)
    assert second["selectivity"] != pytest.approx(first["selectivity"], abs=1e-3)


def test_a_dataframe_run_reports_what_the_same_query_in_sql_reports(
    spark: Any, tables: Tables, serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    """The pipeline as a DataFrame and as SQL text over the same files: the two answers' plans differ in node ids
    and projections, but each operator Spark counted reports the same rows, and what neither can map is the same."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    from pushdown_client.spark_runner import run_sql

    def even(s):  # no type hints: PySpark would take it for a pandas UDF
        return s is not None and len(s) % 2 == 0

    udf = F.udf(even, BooleanType())
    spark.udf.register("even", even, BooleanType())
    sql = (
        "SELECT t.s, count(*) AS count FROM fb_t t JOIN (SELECT a AS ua, c FROM fb_u) u ON t.a = u.ua "
        "WHERE t.b > 5 AND u.c = 'c7' AND even(t.s) GROUP BY t.s"
    )
    statistics = {"tables": {"t": CATALOG["tables"]["fb_t"], "u": CATALOG["tables"]["fb_u"]}}
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        client = PushdownClient(url)
        frame = run_dataframe(
            pipeline(spark, tables, udf),
            client=client,
            functions={udf: {"cost": 5000}},
            catalog=statistics,
            min_time_saved_s=0,
        )
        text = run_sql(spark, sql, client=client, catalog=CATALOG, functions={"even": {"cost": 5000}}, detect=False)
        assert sorted(map(tuple, frame.collect())) == sorted(map(tuple, text.collect()))
        counted, unmapped = [], []
        for run in (frame, text):
            assert run.actual is not None
            stored = http.get(f"/api/optimizations/{run.answer['request_id']}").json()["feedback"]["nodes"]
            counted.append(sorted((n["operator"], n["actual_rows"]) for n in stored if n["actual_rows"] is not None))
            unmapped.append(sorted(run.actual.unmapped.values()))
    assert counted[0] == counted[1] and {op for op, _ in counted[0]} >= {"scan", "join", "aggregate"}, counted
    assert unmapped[0] == unmapped[1], unmapped
