"""DAGs the Spark operator tests run with ``dag.test()``: a declared expensive UDF the service keeps above a
selective join, on two small tables with NULLs, duplicates and skew registered in the task's own session."""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import DAG
from pushdown_airflow.spark_sql import PushdownSparkSqlOperator
from spark_world import CATALOG, FUNCTIONS, SQL, session_on_parquet, session_with_udf

with DAG("spark_sql_to_parquet", schedule=None, start_date=datetime(2026, 1, 1), params={"out": ""}) as _dag:
    PushdownSparkSqlOperator(
        task_id="run",
        sql=SQL,
        catalog=CATALOG,
        functions=FUNCTIONS,
        spark_session=session_with_udf,
        write_to={"parquet": "{{ params.out }}", "mode": "overwrite"},
    )

with DAG("spark_sql_count", schedule=None, start_date=datetime(2026, 1, 1)) as _dag:
    PushdownSparkSqlOperator(
        task_id="run", sql=SQL, catalog=CATALOG, functions=FUNCTIONS, spark_session=session_with_udf
    )

with DAG("spark_sql_bad", schedule=None, start_date=datetime(2026, 1, 1)) as _dag:
    PushdownSparkSqlOperator(
        task_id="run",
        sql=SQL,
        catalog=CATALOG,
        spark_session=session_with_udf,
        retries=3,
        functions={"expensive_check": {"cost": -1}},
    )

with DAG("spark_sql_feedback", schedule=None, start_date=datetime(2026, 1, 1), params={"data": ""}) as _dag:
    PushdownSparkSqlOperator(
        task_id="run", sql=SQL, catalog=CATALOG, functions=FUNCTIONS, spark_session=session_on_parquet
    )
