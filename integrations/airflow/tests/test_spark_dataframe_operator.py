"""PushdownSparkDataFrameOperator in real DAG runs against a real service and local Spark: the task's callable
builds a DataFrame (Parquet files, an unregistered ``F.udf`` after a join to a selective dimension), the service's
answer runs on Spark with the UDF kept above the join, the rows and schema are the DataFrame's own, and the run's
actual rows reach the service's history, where the next run's estimates use them."""

from __future__ import annotations

import json
import re
import urllib.request
from collections import Counter
from pathlib import Path

from airflow.dag_processing.dagbag import DagBag
from conftest import DAGS_FOLDER, TOKEN, task_states, xcom
from spark_world import CALLS, CUSTOMERS, JOINED, ORDERS, building_orders, session_on_parquet

DOCS = Path(__file__).resolve().parents[3] / "docs" / "airflow.md"
CUSTOMER_FILTER = "c_mktsegment = 'BUILDING' AND c_nationkey = 5"


def _run(dag_id: str, **kwargs):
    dag = DagBag().get_dag(dag_id)
    assert dag is not None, f"{dag_id} is not in the dags folder"
    return dag.test(**kwargs)


def _calls() -> int:
    return CALLS[0].value if CALLS else 0


def _get(base_url: str, path: str) -> dict:
    request = urllib.request.Request(f"{base_url}{path}", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def _joined(spark, data: Path) -> int:
    session_on_parquet({"params": {"data": str(data)}})
    return spark.sql(JOINED).first()[0]


def test_writes_parquet_with_the_udf_kept_above_the_join(airflow_db, service_url, spark, tmp_path):
    data, out = tmp_path / "data", tmp_path / "out"
    before = dict(spark.conf.getAll)
    building_orders(spark, str(data))  # the input exists before the pipeline runs
    calls = _calls()
    dag_run = _run("dataframe_to_parquet", run_conf={"data": str(data), "out": str(out)})
    assert task_states(dag_run) == {"run": "success"}
    summary = xcom(dag_run, "run")
    assert summary["written_to"] == {"parquet": str(out)}
    assert summary["decisions"].get("kept", 0) >= 1 and summary["spark"]["barriers"] >= 1
    assert summary["dataframe"]["as_written"] is False and summary["dataframe"]["fallback"] is None
    assert sorted(summary["dataframe"]["leaves"]) == ["customer", "orders"]
    assert summary["spark"]["sql"] and "__pushdown_" in summary["spark"]["sql"]
    # Spark kept the placement: the UDF ran once per row of the join's output, not once per order.
    assert 0 < _calls() - calls == _joined(spark, data)
    # The written rows, names, order and types are the DataFrame's own (run as written on the same session).
    expected = building_orders(spark, str(data))
    written = spark.read.parquet(str(out))
    assert written.columns == expected.columns and written.dtypes == expected.dtypes
    assert Counter(map(tuple, written.collect())) == Counter(map(tuple, expected.collect()))
    assert dict(spark.conf.getAll) == before  # the caller's settings are as they were
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("__pushdown_")]  # no names left behind


def test_counts_rows_and_the_next_run_estimates_from_this_runs_rows(airflow_db, service_url, spark, tmp_path):
    """Two runs of one task: each XCom counts the DataFrame's rows and says what feedback sent; the history holds
    Spark's counts per node, and the second answer estimates the customer filter from what the first run saw."""
    data = tmp_path / "data"
    summaries = []
    for _ in range(2):
        dag_run = _run("dataframe_count", run_conf={"data": str(data)})
        assert task_states(dag_run) == {"run": "success"}
        summaries.append(xcom(dag_run, "run"))
    expected_rows = building_orders(spark, str(data)).count()
    assert expected_rows > 0 and all(s["rows"] == expected_rows for s in summaries)
    assert all("written_to" not in s for s in summaries)

    session_on_parquet({"params": {"data": str(data)}})
    building = spark.sql(f"SELECT count(*) FROM customer WHERE {CUSTOMER_FILTER}").first()[0]
    truths = {building, _joined(spark, data), expected_rows}
    first = _get(service_url, f"/api/optimizations/{summaries[0]['request_id']}")
    assert summaries[0]["feedback"]["nodes"] >= 1, summaries[0]["feedback"]
    actual = {n["id"]: n["actual_rows"] for n in first["feedback"]["nodes"] if n["actual_rows"] is not None}
    assert len(actual) == summaries[0]["feedback"]["nodes"]
    assert building in actual.values() and set(actual.values()) <= truths | {ORDERS}, (actual, truths)

    # The customer scan's two predicates were observed together: the next answer estimates their conjunction as
    # a whole from what the first run counted (docs/feedback.md), and so the scan's rows.
    second = _get(service_url, f"/api/optimizations/{summaries[1]['request_id']}")["response"]
    together = second["feedback"].get("conjunctions") or []
    assert any(abs(c["selectivity"] - building / CUSTOMERS) < 1e-6 for c in together), second["feedback"]
    scans = [n["rows_out"] for n in second["cost"]["after"]["nodes"] if n["operator"] == "scan"]
    assert any(abs(rows - building) < 1e-6 for rows in scans), scans


def test_a_callable_that_returns_no_dataframe_fails_without_retrying(airflow_db, service_url):
    dag_run = _run("dataframe_not_a_dataframe")
    assert task_states(dag_run) == {"run": "failed"}


def test_a_4xx_fails_the_task_without_retrying(airflow_db, service_url, spark, tmp_path):
    dag_run = _run("dataframe_bad", run_conf={"data": str(tmp_path / "data")})
    assert task_states(dag_run) == {"run": "failed"}


def docs_dag() -> str:
    """The DAG file in docs/airflow.md's section on this operator."""
    section = DOCS.read_text().split("## `PushdownSparkDataFrameOperator`", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_docs_example_runs_as_written(airflow_db, service_url, spark, tmp_path):
    """docs/airflow.md's example, a DAG file as written: loaded by Airflow's DagBag, run with ``dag.test()`` on
    Parquet input; the service kept its expensive check above the join, and the rows it writes are its DataFrame's."""
    dag_file = DAGS_FOLDER / "docs_dataframe_dag.py"  # dag.test() syncs the dags folder's DAGs to run one
    dag_file.write_text(docs_dag())
    try:
        bag = DagBag(dag_folder=str(dag_file))
        assert not bag.import_errors, bag.import_errors
        assert len(bag.dag_ids) == 1, bag.dag_ids
        dag = bag.get_dag(bag.dag_ids[0])
        (task,) = dag.tasks
        assert type(task).__name__ == "PushdownSparkDataFrameOperator"
        data, out = tmp_path / "data", tmp_path / "out"
        session_on_parquet({"params": {"data": str(data)}})  # the example's input: orders and customer as Parquet
        dag_run = dag.test(run_conf={"data": str(data), "out": str(out)})
    finally:
        dag_file.unlink()
    assert task_states(dag_run) == {task.task_id: "success"}
    summary = xcom(dag_run, task.task_id)
    assert summary["decisions"].get("kept", 0) >= 1 and summary["dataframe"]["as_written"] is False
    written = spark.read.parquet(summary["written_to"]["parquet"])
    expected = task.dataframe(spark, data=str(data))
    assert written.columns == expected.columns and written.dtypes == expected.dtypes
    assert Counter(map(tuple, written.collect())) == Counter(map(tuple, expected.collect()))
    assert summary["feedback"]["nodes"] >= 1
