"""PushdownSparkSqlOperator in real DAG runs against a real service: the answer runs on Spark through the client's
runner, so a declared expensive UDF the service keeps above a selective join runs on the join's output only."""

from __future__ import annotations

from collections import Counter

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.sdk.exceptions import AirflowFailException
from conftest import task_states, xcom
from pushdown_airflow.spark_sql import write_target
from spark_world import CALLS, JOINED, SQL, session_with_udf


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


def test_a_4xx_fails_the_task_without_retrying(airflow_db, service_url):
    dag_run = _run("spark_sql_bad")
    assert task_states(dag_run) == {"run": "failed"}


def test_write_to_takes_exactly_one_target():
    assert write_target({"table": "t", "mode": "overwrite"}) == ("table", "t")
    with pytest.raises(AirflowFailException, match="exactly one of"):
        write_target({"table": "t", "parquet": "/p"})
    with pytest.raises(AirflowFailException, match="exactly one of"):
        write_target({"tabel": "t"})
