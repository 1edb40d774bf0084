"""DAGs the DataFrame operator tests run with ``dag.test()``: ``spark_world.building_orders``, a DataFrame with an
expensive ``F.udf`` after a join to a selective dimension, built in the task's callable from Parquet files."""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import DAG
from pushdown_airflow.spark_dataframe import PushdownSparkDataFrameOperator
from spark_world import CATALOG, building_orders

FUNCTIONS = {"expensive_check": {"cost": 5000}}

with DAG("dataframe_to_parquet", schedule=None, start_date=datetime(2026, 1, 1), params={"data": "", "out": ""}):
    PushdownSparkDataFrameOperator(
        task_id="run",
        dataframe=building_orders,
        dataframe_kwargs={"data": "{{ params.data }}"},
        catalog=CATALOG,
        functions=FUNCTIONS,
        write_to={"parquet": "{{ params.out }}", "mode": "overwrite"},
    )

with DAG("dataframe_count", schedule=None, start_date=datetime(2026, 1, 1), params={"data": ""}):
    PushdownSparkDataFrameOperator(
        task_id="run",
        dataframe=building_orders,
        dataframe_kwargs={"data": "{{ params.data }}"},
        catalog=CATALOG,
        functions=FUNCTIONS,
    )

with DAG("dataframe_not_a_dataframe", schedule=None, start_date=datetime(2026, 1, 1)):
    PushdownSparkDataFrameOperator(task_id="run", dataframe=lambda spark: [1, 2, 3], retries=3)

with DAG("dataframe_bad", schedule=None, start_date=datetime(2026, 1, 1), params={"data": ""}):
    PushdownSparkDataFrameOperator(
        task_id="run",
        dataframe=building_orders,
        dataframe_kwargs={"data": "{{ params.data }}"},
        functions={"expensive_check": {"cost": -1}},
        retries=3,
    )
