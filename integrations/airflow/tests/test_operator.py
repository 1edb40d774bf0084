"""PushdownOptimizeOperator in real DAG runs (``dag.test()``) against a real service."""

from __future__ import annotations

import json
import urllib.request

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.sdk.exceptions import AirflowFailException
from conftest import TOKEN, task_states, xcom
from pushdown_airflow.operators import PushdownOptimizeOperator
from pushdown_test_dags import CATALOG, SQL


def _run(dag_id: str, **kwargs):
    dag = DagBag().get_dag(dag_id)
    assert dag is not None, f"{dag_id} is not in the dags folder"
    return dag, dag.test(**kwargs)


def _history(service_url: str, request_id: str) -> dict:
    request = urllib.request.Request(
        f"{service_url}/api/optimizations/{request_id}", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@pytest.mark.parametrize("deferrable", [False, True], ids=["sync", "deferrable"])
def test_summary_in_xcom_and_context_defaults_to_the_run(airflow_db, service_url, deferrable, caplog):
    caplog.set_level("INFO", logger="airflow.sdk.definitions.dag")
    dag, dag_run = _run(f"summary_{'deferred' if deferrable else 'sync'}", run_conf={"catalog": CATALOG})
    assert task_states(dag_run) == {"optimize": "success"}
    assert ("running trigger in line" in caplog.text) == deferrable
    summary = xcom(dag_run, "optimize")
    assert set(summary) >= {"request_id", "cost_before", "cost_after", "savings", "sql"}
    assert summary["cost_after"] < summary["cost_before"]
    assert summary["savings_vs_written"] == pytest.approx(1 - summary["cost_after"] / summary["cost_before"], abs=1e-5)
    assert summary["savings"] == 0.0  # a cheap filter pushed as rule-based pushdown pushes it: nothing gained on it
    assert "o.amount > 100" in summary["sql"]  # the template was rendered before the call
    assert summary["decisions"].get("pushed", 0) >= 1
    # The service recorded the call under this DAG, task and run (history waits for its writer thread).
    record = _wait_for_record(service_url, summary["request_id"])
    assert _context(record) == {"pipeline": dag.dag_id, "task": "optimize", "run": dag_run.run_id}


def _context(record: dict) -> dict:
    return {key: record[key] for key in ("pipeline", "task", "run")}


def _wait_for_record(service_url: str, request_id: str) -> dict:
    import time

    deadline = time.monotonic() + 10
    while True:
        try:
            return _history(service_url, request_id)
        except urllib.error.HTTPError as exc:
            if exc.code != 404 or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_explicit_context_and_plan_input(airflow_db, service_url):
    _, dag_run = _run("plan_with_context")
    summary = xcom(dag_run, "optimize")
    assert summary["decisions"].get("pushed", 0) >= 1
    record = _wait_for_record(service_url, summary["request_id"])
    assert _context(record) == {"pipeline": "nightly", "task": "t", "run": "r"}


@pytest.mark.parametrize("deferrable", [False, True], ids=["sync", "deferrable"])
def test_a_4xx_fails_the_task_with_the_services_message(airflow_db, service_url, deferrable):
    _, dag_run = _run(f"bad_sql_{'deferred' if deferrable else 'sync'}")
    assert task_states(dag_run) == {"optimize": "failed"}  # failed at once: no retry of a wrong request
    assert xcom(dag_run, "optimize") is None


def test_execute_raises_the_service_error_without_retrying(service_url):
    operator = PushdownOptimizeOperator(task_id="bad", sql="SELECT FROM WHERE", catalog=CATALOG, retries=3)
    with pytest.raises(AirflowFailException, match=r"422 .*at \$\.sql"):
        operator.execute({"run_id": "manual"})


def test_catalog_that_is_not_json_fails_clearly():
    operator = PushdownOptimizeOperator(task_id="bad_catalog", sql=SQL, catalog="{not json")
    with pytest.raises(AirflowFailException, match="catalog is not valid JSON"):
        operator.build_request({"run_id": "r"})


def test_sql_or_plan_exactly_one():
    with pytest.raises(ValueError, match="exactly one of sql and plan"):
        PushdownOptimizeOperator(task_id="neither")
    with pytest.raises(ValueError, match="exactly one of sql and plan"):
        PushdownOptimizeOperator(task_id="both", sql=SQL, plan={"op": "scan", "table": "t"})
