"""The example DAG, loaded from the configured dags folder and run once with ``dag.test()``: describe the tables,
then optimize and run on Spark through the client's runner (``PushdownSparkSqlOperator``)."""

from __future__ import annotations

import uuid

from conftest import DAGS_FOLDER, task_states, xcom


def test_example_dag_optimizes_then_counts_rows_on_spark(airflow_db, service_url, example_data, spark):
    from airflow.configuration import conf
    from airflow.dag_processing.dagbag import DagBag

    assert conf.get("core", "dags_folder") == str(DAGS_FOLDER)
    bag = DagBag()
    assert not bag.import_errors, bag.import_errors
    dag = bag.get_dag("pushdown_optimize_then_spark")
    assert dag is not None, sorted(bag.dag_ids)

    dag_run = dag.test(run_conf={"data_dir": str(example_data)})

    assert task_states(dag_run) == {"describe_tables": "success", "run_on_spark": "success"}
    summary = xcom(dag_run, "run_on_spark")
    uuid.UUID(summary["request_id"])
    assert summary["cost_after"] < summary["cost_before"] and 0 < summary["savings_vs_written"] < 1
    assert summary["savings"] == 0.0 and summary["savings_interval"] == [0.0, 0.0]  # the headline: vs rule-based
    assert summary["decisions"].get("pushed", 0) >= 2  # both conjuncts go below the join
    original_sql = dag.params["sql"]
    # Both cheap filters pushed, as Catalyst would: what runs on Spark is the query as written, with no settings;
    # the XCom's sql is that one query to run.
    assert summary["spark"]["as_written"] and summary["spark"]["sql"] == original_sql
    assert summary["sql"] == original_sql
    assert summary["spark"]["conf"] == {}

    # The row count the DAG logged and returned is the original query's, run on the same tables.
    from pushdown_optimize_then_spark import register_tables

    register_tables(spark, example_data)
    expected = spark.sql(original_sql).count()
    assert expected > 0
    assert summary["rows"] == expected
    # The example data has NULLs where they matter: join keys, the filtered region, amounts.
    nulls = spark.sql(
        "SELECT (SELECT count(*) FROM customers WHERE region IS NULL), "
        "(SELECT count(*) FROM orders WHERE customer_id IS NULL OR amount IS NULL)"
    ).first()
    assert nulls[0] > 0 and nulls[1] > 0
