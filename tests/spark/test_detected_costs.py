"""Costs measured, not declared: through ``run_sql`` on local Spark, with no function declared anywhere, an
undeclared Python UDF that is slow is detected in the analyzed plan, measured, sent with its source and held above
a selective join (called once per join output row, counted with an accumulator); a cheap one, measured cheap, is
left where rule-based pushdown puts it; after a run, the service prices it from what the executors measured."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from api.app import create_app
from pushdown_client.calibration import calibrate
from pushdown_client.spark_runner import MIN_TIME_SAVED_S
from service.client import PushdownClient
from service.settings import Settings
from service.spark_runner import run_sql
from tests.spark.world import catalog, register

SLOW_S = 0.0005
SELECTIVE = (
    "SELECT o.o_id, c.c_name FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
    "WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5 AND {udf}(o.o_comment)"
)
JOINED = (
    "SELECT count(*) FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
    "WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5"
)
#: a join that drops 3 of 4000 rows: holding a UDF above it saves 0.1 % of its calls
WIDE = (
    "SELECT o.o_id, c.c_name FROM cost_ords o JOIN cost_custs c ON o.o_custkey = c.c_custkey WHERE {udf}(o.o_comment)"
)
WIDE_CATALOG: dict[str, Any] = {
    "tables": {
        "cost_ords": {
            "columns": [
                {"name": "o_id", "type": "int"},
                {"name": "o_custkey", "type": "int"},
                {"name": "o_comment", "type": "string"},
            ],
            "row_count": 4000,
            "column_stats": {"o_custkey": {"ndv": 1001, "min": 0, "max": 1000, "null_count": 0}},
        },
        "cost_custs": {
            "columns": [{"name": "c_custkey", "type": "int"}, {"name": "c_name", "type": "string"}],
            "row_count": 1000,
            "column_stats": {"c_custkey": {"ndv": 1000, "min": 0, "max": 999, "null_count": 0}},
        },
    }
}


class Udfs:
    """``slow_udf`` (sleeps SLOW_S a call) and ``cheap_udf``, registered by name, their calls counted."""

    def __init__(self, spark: Any) -> None:
        from pyspark.sql.types import BooleanType

        self.calls = spark.sparkContext.accumulator(0)
        calls = self.calls

        def slow(text: str | None) -> bool:
            calls.add(1)
            time.sleep(SLOW_S)
            return text is not None and len(text) % 3 != 0

        def cheap(text: str | None) -> bool:
            calls.add(1)
            return text is not None and len(text) % 3 != 0

        self.slow = spark.udf.register("slow_udf", slow, BooleanType())
        spark.udf.register("cheap_udf", cheap, BooleanType())

    def count(self, action: Callable[[], Any]) -> tuple[Any, int]:
        start = self.calls.value
        result = action()
        return result, self.calls.value - start


@pytest.fixture(scope="module")
def world(spark: Any) -> tuple[Any, Udfs]:
    register(spark)
    # both UDFs keep the one comment in ten whose length is not a multiple of 3, on their sample as on the table:
    # below the wide join, the cheap one saves the join nine rows in ten
    ords = [(i, i % 1001, "note xy" if i % 10 == 0 else "note x") for i in range(4000)]
    spark.createDataFrame(ords, "o_id INT, o_custkey INT, o_comment STRING").createOrReplaceTempView("cost_ords")
    custs = [(i, f"Customer#{i}") for i in range(1000)]
    spark.createDataFrame(custs, "c_custkey INT, c_name STRING").createOrReplaceTempView("cost_custs")
    return spark, Udfs(spark)


class Recording(PushdownClient):
    """The in-process client, keeping the bodies it sends."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sent: list[dict[str, Any]] = []

    def optimize_body(self, body: Any) -> Any:
        self.sent.append(dict(body))
        return super().optimize_body(body)


def costs(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in answer["function_costs"]}


def test_an_undeclared_slow_udf_is_measured_and_held_above_a_selective_join(world):
    spark, udfs = world
    client = Recording()
    run = run_sql(spark, SELECTIVE.format(udf="slow_udf"), client=client, catalog=catalog())
    (body,) = client.sent
    sent = body["functions"]["slow_udf"]
    assert sent["source"].startswith("measured:") and sent["deterministic"] is True
    low, high = sent["interval"]
    assert low <= sent["cost"] <= high
    calibration = calibrate(spark)
    assert sent["cost"] > 1e-3 * SLOW_S / calibration.unit_s * 1e3 / 3  # at least a third of the sleep, in units
    assert body["options"]["calibration"]["unit_s"] == calibration.unit_s
    assert costs(run.answer)["slow_udf"]["source"] == sent["source"]
    assert run.answer["spark"]["barriers"] == ["slow_udf(o.o_comment)"]
    saved = run.answer["cost"]["time_saved_vs_baseline_s"]
    assert saved["estimate"] > 0 and saved["interval"][0] <= saved["estimate"] <= saved["interval"][1]

    joined = spark.sql(JOINED).first()[0]
    rows, calls = udfs.count(run.collect)
    assert 0 < calls == joined  # the UDF ran on the join's output only
    assert sorted(rows) == sorted(spark.sql(SELECTIVE.format(udf="slow_udf")).collect())
    # Spark alone evaluates it below the join, on every order with a comment
    _, alone = udfs.count(spark.sql(SELECTIVE.format(udf="slow_udf")).collect)
    assert alone > 10 * calls


def test_a_cheap_udf_measured_cheap_is_left_where_rule_based_pushdown_puts_it(world, caplog):
    """Over a join that drops 0.1 % of the rows, evaluating a cheap UDF below the join costs less than the rows
    it would save the join; a slow one costs more. Both measured, neither declared."""
    spark, udfs = world
    client = Recording()
    # the join drops 0.1 % of the rows: the saving is below the default options.min_savings, which would run both
    # as written; the comparison of the two measured costs is what is tested here
    keep_any = {"min_savings": 0}
    cheap = run_sql(spark, WIDE.format(udf="cheap_udf"), client=client, catalog=WIDE_CATALOG, options=keep_any)
    slow = run_sql(
        spark, WIDE.format(udf="slow_udf"), client=client, catalog=WIDE_CATALOG, options=keep_any, min_time_saved_s=0
    )
    cheap_cost = client.sent[0]["functions"]["cheap_udf"]
    slow_cost = client.sent[1]["functions"]["slow_udf"]
    assert cheap_cost["source"].startswith("measured:") and slow_cost["source"].startswith("measured:")
    assert slow_cost["cost"] > 10 * cheap_cost["cost"]

    assert cheap.answer["spark"]["barriers"] == [] and cheap.answer["spark"].get("as_written") is True
    _, calls = udfs.count(cheap.collect)
    assert calls == 4000  # below the join, on every row of cost_ords, as Spark alone does

    assert slow.answer["spark"]["barriers"] == ["slow_udf(o.o_comment)"]
    _, calls = udfs.count(slow.collect)
    joined = spark.sql("SELECT count(*) FROM cost_ords o JOIN cost_custs c ON o.o_custkey = c.c_custkey").first()[0]
    assert calls == joined == 3997  # above the join, on its output (3 orders have no customer)

    # the runner's default floor: 3 calls saved (about 1.5 ms of executor time) do not pay for a barrier, so the
    # answer still holds the UDF above the join and the query runs as written
    with caplog.at_level(logging.INFO, logger="pushdown_client.spark_runner"):
        floor = run_sql(spark, WIDE.format(udf="slow_udf"), client=client, catalog=WIDE_CATALOG, options=keep_any)
    assert "running the query as written" in caplog.text and "min_time_saved_s=0.1" in caplog.text
    assert floor.answer["spark"]["barriers"] == ["slow_udf(o.o_comment)"]
    assert floor.answer["cost"]["time_saved_vs_baseline_s"]["estimate"] < MIN_TIME_SAVED_S
    _, calls = udfs.count(floor.collect)
    assert calls == 4000


def test_defaults_only_and_detection_off(world):
    spark, _ = world
    client = Recording()
    run_sql(spark, SELECTIVE.format(udf="slow_udf"), client=client, catalog=catalog(), detect="defaults")
    assert client.sent[0]["functions"]["slow_udf"] == {
        "cost": 200.0,
        "source": "detected: python_udf default",
        "deterministic": True,
        "interval": [20.0, 2000.0],
    }
    off = run_sql(spark, SELECTIVE.format(udf="slow_udf"), client=client, catalog=catalog(), detect=False)
    assert "functions" not in client.sent[1]
    assert off.answer["spark"]["barriers"] == []  # undeclared: stays where the query wrote it, no barrier needed
    declared = run_sql(
        spark, SELECTIVE.format(udf="slow_udf"), client=client, catalog=catalog(), functions={"slow_udf": {"cost": 3}}
    )
    assert client.sent[2]["functions"] == {"slow_udf": {"cost": 3, "source": "declared"}}
    assert costs(declared.answer)["slow_udf"]["source"] == "declared"


Serve = Callable[[FastAPI], AbstractContextManager[str]]


@pytest.mark.slow
def test_after_a_run_the_service_prices_the_udf_from_what_the_executors_measured(
    world, serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path
):
    """Above the wide join the UDF runs 3997 times: enough calls for their time to outweigh the workers' start-up
    (a few dozen would not be learned from, ``python_udfs.trusted``)."""
    spark, _ = world
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    sql = WIDE.format(udf="slow_udf")
    with serve(app) as url:
        client = PushdownClient(url)
        keep_any = {"min_savings": 0}  # the wide join's 0.1 % saving is below the default bar
        first = run_sql(spark, sql, client=client, catalog=WIDE_CATALOG, options=keep_any)
        first.collect()
        assert first.actual is not None
        second = run_sql(spark, sql, client=client, catalog=WIDE_CATALOG, options=keep_any)
    learned = costs(second.answer)["slow_udf"]
    assert learned["source"] == "learned" and learned["observations"] == 1
    assert learned["replaced"].startswith("measured:")
    unit = calibrate(spark).unit_s
    assert learned["cost"] * unit > SLOW_S / 2  # the executors' time per call covers the sleep
    assert second.answer["spark"]["barriers"] == ["slow_udf(o.o_comment)"]


@pytest.mark.slow
def test_a_dataframe_udf_nobody_declared_is_measured_placed_and_then_learned(
    world, serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path
):
    """``run_dataframe`` with no ``functions`` (the tables' statistics as an analyze reports them, which say the
    join drops 3 of 4000 rows): the pipeline's UDF, written after that join, is found in the plan, measured in the
    driver, held above the join (Spark alone pushes it below, onto every order) and, after the run's feedback,
    priced from what the executors measured."""
    from pyspark.sql import functions as F

    from pushdown_client.dataframe import run_dataframe

    spark, udfs = world

    def pipeline() -> Any:
        orders, customers = spark.table("cost_ords"), spark.table("cost_custs")
        joined = orders.join(customers, orders.o_custkey == customers.c_custkey)
        return joined.filter(udfs.slow(F.col("o_comment"))).select("o_id", "c_name")

    app = create_app(make_settings(data_dir=tmp_path / "data"))
    with serve(app) as url:
        client = Recording(url=url)
        # every rewrite runs (min_time_saved_s=0): the join saves 3 calls, far below the runner's default floor
        first = run_dataframe(pipeline(), client=client, catalog=WIDE_CATALOG, min_time_saved_s=0)
        sent = costs(first.answer)["__pushdown_udf_slow_udf"]
        assert sent["source"].startswith("measured:")
        assert first.answer["cost"]["time_saved_vs_baseline_s"]["estimate"] > 0
        rows, calls = udfs.count(first.collect)
        assert calls == 3997  # on the join's output
        assert first.actual is not None
        second = run_dataframe(pipeline(), client=client, catalog=WIDE_CATALOG, min_time_saved_s=0)
    _, alone = udfs.count(pipeline().collect)
    assert alone == 4000  # Spark alone: below the join
    assert sorted(rows) == sorted(pipeline().collect())
    learned = costs(second.answer)["__pushdown_udf_slow_udf"]
    assert learned["source"] == "learned" and learned["replaced"].startswith("measured:")
    assert learned["cost"] * calibrate(spark).unit_s > SLOW_S / 2
    _, calls = udfs.count(second.collect)
    assert calls == 3997
    # the call carries no cost of its own (one would win over the learned one): the engine priced it as learned
    sent = client.sent[-1]
    assert [c for c in udf_calls(sent["plan"]) if "cost" in c] == []
    assert sent["functions"]["__pushdown_udf_slow_udf"]["source"].startswith("measured:")
    filters = [n["k"] for n in second.answer["cost"]["after"]["nodes"] if n["operator"] == "filter"]
    assert any(abs(k - learned["cost"]) <= 0.01 * learned["cost"] for k in filters), (filters, learned["cost"])


def udf_calls(item: Any) -> list[dict[str, Any]]:
    """Every ``{"fn": "udf"}`` call in a wire plan."""
    if isinstance(item, list):
        return [c for x in item for c in udf_calls(x)]
    if not isinstance(item, dict):
        return []
    own = [item] if item.get("fn") == "udf" else []
    return own + [c for v in item.values() for c in udf_calls(v)]


def test_a_udf_written_in_a_temporary_view_is_measured_and_held_above_the_join(world):
    """``run_sql`` sends the query with the view inlined; the view's UDF is detected in that text (not left out
    because the query as written does not name it), measured, and held above the selective join."""
    spark, udfs = world
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW slow_orders AS SELECT * FROM orders WHERE slow_udf(o_comment)")
    sql = (
        "SELECT o.o_id, c.c_name FROM slow_orders o JOIN customer c ON o.o_custkey = c.c_custkey "
        "WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5"
    )
    client = Recording()
    run = run_sql(spark, sql, client=client, catalog=catalog())
    assert client.sent[0]["functions"]["slow_udf"]["source"].startswith("measured:")
    assert run.answer["spark"]["barriers"] == ["slow_udf(o.o_comment)"]
    rows, calls = udfs.count(run.collect)
    assert 0 < calls == spark.sql(JOINED).first()[0]
    assert sorted(rows) == sorted(spark.sql(sql).collect())


def test_a_udf_in_a_join_condition_is_measured_on_its_side(world):
    """The UDF's node is the join; its arguments are sampled from the side that has them."""
    spark, udfs = world
    sql = (
        "SELECT o.o_id, c.c_name FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey "
        "AND slow_udf(o.o_comment) WHERE c.c_mktsegment = 'BUILDING' AND c.c_nationkey = 5"
    )
    client = Recording()
    run = run_sql(spark, sql, client=client, catalog=catalog())
    sent = client.sent[0]["functions"]["slow_udf"]
    assert sent["source"].startswith("measured:")
    calibration = calibrate(spark)
    assert sent["cost"] * calibration.unit_s > SLOW_S / 3
    rows, calls = udfs.count(run.collect)
    assert 0 < calls == spark.sql(JOINED).first()[0]
    assert sorted(rows) == sorted(spark.sql(sql).collect())


def test_a_boolean_udf_sends_the_share_of_its_sample_it_kept(world):
    """The measured calls' results are a sample of the conjunct: its selectivity goes with the cost."""
    spark, _ = world
    client = Recording()
    run_sql(spark, SELECTIVE.format(udf="cheap_udf"), client=client, catalog=catalog())
    sent = client.sent[0]["functions"]["cheap_udf"]
    rows = sent["sample_rows"]
    comments = [r[0] for r in spark.table("orders").select("o_comment").limit(rows).collect()]
    kept = sum(1 for text in comments if text is not None and len(text) % 3 != 0)
    assert 0 < rows <= 200 and sent["selectivity"] == round(kept / rows, 4)


#: customers whose key is below this (the first rows, all the driver's sample reads) are active, and one in 100
#: of the rest: the sample says every customer is, the table about 6%
ACTIVE_BELOW = 200
MISLEADING = (
    "SELECT o.o_id, c.c_key FROM mis_ords o JOIN mis_custs c ON o.o_custkey = c.c_key "
    "WHERE active_cust(c.c_key) AND cheap_udf(o.o_comment)"
)
MIS_CATALOG: dict[str, Any] = {
    "tables": {
        "mis_ords": {
            "columns": [
                {"name": "o_id", "type": "int"},
                {"name": "o_custkey", "type": "int"},
                {"name": "o_comment", "type": "string"},
            ],
            "row_count": 8000,
            "column_stats": {"o_custkey": {"ndv": 4000, "min": 0, "max": 3999, "null_count": 0}},
        },
        "mis_custs": {
            "columns": [{"name": "c_key", "type": "int"}],
            "row_count": 4000,
            "column_stats": {"c_key": {"ndv": 4000, "min": 0, "max": 3999, "null_count": 0}},
        },
    }
}


@pytest.mark.slow
def test_a_misleading_sample_is_corrected_by_the_runs_feedback(
    world, serve: Serve, make_settings: Callable[..., Settings], tmp_path: Path
):
    """``active_cust`` keeps every customer of its sample (the file's first rows) and about 6% of the table. Run
    1 believes the sample: the join keeps every order, so ``cheap_udf`` is left below it (on every order, as Spark
    puts it). The run's feedback counts what the customers' filter kept; run 2 estimates the join from that and
    holds ``cheap_udf`` above it, on the joined rows only."""
    from pyspark.sql.types import BooleanType

    spark, udfs = world
    spark.udf.register("active_cust", lambda k: k is not None and (k < ACTIVE_BELOW or k % 100 == 0), BooleanType())
    ords = [(i, i % 4000, f"note {i % 97}") for i in range(8000)]
    spark.createDataFrame(ords, "o_id INT, o_custkey INT, o_comment STRING").createOrReplaceTempView("mis_ords")
    custs = spark.createDataFrame([(i,) for i in range(4000)], "c_key INT")  # in key order: the sample is 0-199
    custs.createOrReplaceTempView("mis_custs")
    app = create_app(make_settings(data_dir=tmp_path / "data"))
    with serve(app) as url:
        client = PushdownClient(url)
        first = run_sql(spark, MISLEADING, client=client, catalog=MIS_CATALOG, min_time_saved_s=0)
        sample = costs(first.answer)["active_cust"]
        assert first.answer["spark"]["barriers"] == []
        first_rows, first_calls = udfs.count(first.collect)
        assert first_calls == 8000  # below the join, on every order
        assert first.actual is not None
        second = run_sql(spark, MISLEADING, client=client, catalog=MIS_CATALOG, min_time_saved_s=0)
    assert sample["source"].startswith("measured:")
    assert second.answer["spark"]["barriers"] == ["cheap_udf(o.o_comment)"]
    joined = spark.sql(
        "SELECT count(*) FROM mis_ords o JOIN mis_custs c ON o.o_custkey = c.c_key WHERE active_cust(c.c_key)"
    ).first()[0]
    rows, calls = udfs.count(second.collect)
    assert calls == joined < 8000 // 10
    assert sorted(rows) == sorted(first_rows) == sorted(spark.sql(MISLEADING).collect())
