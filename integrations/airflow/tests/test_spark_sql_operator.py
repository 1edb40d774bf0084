"""PushdownSparkSqlOperator in real DAG runs against a real service: the answer runs on Spark through the client's
runner, so a declared expensive UDF the service keeps above a selective join runs on the join's output only."""

from __future__ import annotations

import json
import urllib.request
from collections import Counter

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.sdk.exceptions import AirflowFailException
from conftest import TOKEN, task_states, xcom
from pushdown_airflow.spark_sql import write_target
from spark_world import CALLS, JOINED, ORDERS, SQL, session_with_udf


def _run(dag_id: str, **kwargs):
    dag = DagBag().get_dag(dag_id)
    assert dag is not None, f"{dag_id} is not in the dags folder"
    return dag.test(**kwargs)


def _calls() -> int:
    return CALLS[0].value if CALLS else 0


def test_writes_parquet_with_the_udf_kept_above_the_join(airflow_db, service_url, spark, tmp_path):
    before = dict(spark.conf.getAll)
    calls = _calls()
    out = tmp_path / "out"
    dag_run = _run("spark_sql_to_parquet", run_conf={"out": str(out)})
    assert task_states(dag_run) == {"run": "success"}
    summary = xcom(dag_run, "run")
    assert summary["written_to"] == {"parquet": str(out)}
    assert summary["decisions"].get("kept", 0) >= 1 and summary["spark"]["barriers"] >= 1
    # Spark kept the placement: the UDF ran once per row of the join's output, not once per order.
    joined = spark.sql(JOINED).first()[0]
    assert 0 < _calls() - calls == joined
    # The written rows, names, order and types are the original query's (run on the same session).
    session_with_udf({})
    expected = spark.sql(SQL)
    written = spark.read.parquet(str(out))
    assert written.columns == expected.columns and written.dtypes == expected.dtypes
    assert Counter(map(tuple, written.collect())) == Counter(map(tuple, expected.collect()))
    assert dict(spark.conf.getAll) == before  # the caller's settings are as they were


def test_counts_rows_without_a_write_target(airflow_db, service_url, spark):
    dag_run = _run("spark_sql_count")
    summary = xcom(dag_run, "run")
    session_with_udf({})
    assert summary["rows"] == spark.sql(SQL).count() > 0
    assert "written_to" not in summary


def test_the_run_sends_actual_rows_to_the_history_record(airflow_db, service_url, spark, tmp_path):
    """After the task, the service's history record of its request holds Spark's own counts per plan node."""
    dag_run = _run("spark_sql_feedback", run_conf={"data": str(tmp_path / "data")})
    assert task_states(dag_run) == {"run": "success"}
    summary = xcom(dag_run, "run")
    assert summary["feedback"]["nodes"] >= 1, summary["feedback"]
    record = _get(service_url, f"/api/optimizations/{summary['request_id']}")
    actual = {n["id"]: n["actual_rows"] for n in record["feedback"]["nodes"] if n["actual_rows"] is not None}
    assert len(actual) == summary["feedback"]["nodes"]
    # The counts are the truth, computed by Spark on the same data: the filtered customer scan, the orders
    # scan, the join below the kept UDF, the UDF's filter; every count sent is one of them.
    session_with_udf({})
    truths = {
        "customers": spark.sql(
            "SELECT count(*) FROM customer WHERE c_mktsegment = 'BUILDING' AND c_nationkey = 5"
        ).first()[0],
        "orders": ORDERS,
        "joined": spark.sql(JOINED).first()[0],
        "result": spark.sql(SQL).count(),
    }
    assert truths["customers"] in actual.values(), (actual, truths)
    assert set(actual.values()) <= set(truths.values()), (actual, truths)
    assert all(n["q_error"] >= 1 for n in record["feedback"]["nodes"] if n["actual_rows"] is not None)


def _get(base_url: str, path: str) -> dict:
    request = urllib.request.Request(f"{base_url}{path}", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def test_a_4xx_fails_the_task_without_retrying(airflow_db, service_url):
    dag_run = _run("spark_sql_bad")
    assert task_states(dag_run) == {"run": "failed"}


def test_write_to_takes_exactly_one_target():
    assert write_target({"table": "t", "mode": "overwrite"}) == ("table", "t")
    with pytest.raises(AirflowFailException, match="exactly one of"):
        write_target({"table": "t", "parquet": "/p"})
    with pytest.raises(AirflowFailException, match="exactly one of"):
        write_target({"tabel": "t"})
