"""Optimize a query with the pushdown service, then run the answer on Spark and log its row count.

1. ``describe_tables``: the Parquet tables under ``data_dir`` (written with example rows, NULLs included, when
   missing), described for the service: row counts, null counts, min/max and distinct counts per column.
2. ``run_on_spark``: ``PushdownSparkSqlOperator`` sends the SQL and that catalog to ``POST /optimize`` and runs the
   answer with the client's Spark runner on local Spark (``PUSHDOWN_EXAMPLE_SPARK_MASTER``, default ``local[2]``),
   the tables registered as views in that session, so Spark keeps each placement the service decided. Its XCom is
   the summary (request id, cost before and after, savings, the SQL that ran) and the row count.

``PushdownOptimizeOperator`` asks without running, for a task that runs the SQL some other way.

Needs the connection ``pushdown_default`` (e.g. ``AIRFLOW_CONN_PUSHDOWN_DEFAULT='pushdown://:TOKEN@host:8000'``).
"""

from __future__ import annotations

import logging
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from airflow.sdk import Param, dag, task
from pushdown_airflow.spark_sql import PushdownSparkSqlOperator

log = logging.getLogger(__name__)

EXAMPLE_SQL = """\
SELECT c.name, c.region, o.id AS order_id, o.amount
FROM customers AS c
JOIN orders AS o ON c.id = o.customer_id
WHERE o.amount > 900 AND c.region = 'EU'
"""

REGIONS = ["EU", "US", "APAC", None]


def example_rows() -> dict[str, tuple[str, list[tuple[Any, ...]]]]:
    """Small deterministic tables with NULLs in keys, filter columns and values; (Spark DDL schema, rows)."""
    customers = [(i, f"customer {i}" if i % 11 else None, REGIONS[i % 4]) for i in range(1, 201)]
    orders = [
        (i, None if i % 17 == 0 else (i * 7) % 230, None if i % 13 == 0 else float((i * 37) % 1000))
        for i in range(1, 5001)
    ]
    return {
        "customers": ("id INT, name STRING, region STRING", customers),
        "orders": ("id INT, customer_id INT, amount DOUBLE", orders),
    }


def spark_session():
    from pyspark.sql import SparkSession

    master = os.environ.get("PUSHDOWN_EXAMPLE_SPARK_MASTER", "local[2]")
    return (
        SparkSession.builder.master(master)
        .appName("pushdown-airflow-example")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )


_TYPES = {"int": "int", "bigint": "int", "double": "double", "string": "string"}


def describe(df) -> dict[str, Any]:
    """One table of the service's catalog: columns with types, row count and per-column statistics."""
    from pyspark.sql import functions as F

    columns = [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
    aggregates = [F.count(F.lit(1)).alias("__rows")]
    for name, _ in columns:
        aggregates += [
            F.count(F.when(F.col(name).isNull(), 1)).alias(f"{name}__nulls"),
            F.approx_count_distinct(name).alias(f"{name}__ndv"),
            F.min(name).alias(f"{name}__min"),
            F.max(name).alias(f"{name}__max"),
        ]
    row = df.agg(*aggregates).first().asDict()
    stats = {
        name: {
            "null_count": row[f"{name}__nulls"],
            "ndv": row[f"{name}__ndv"],
            "min": row[f"{name}__min"],
            "max": row[f"{name}__max"],
        }
        for name, _ in columns
    }
    return {
        "columns": [{"name": name, "type": _TYPES.get(kind, "string")} for name, kind in columns],
        "row_count": row["__rows"],
        "column_stats": stats,
    }


def register_tables(spark, data_dir: Path) -> dict[str, Any]:
    """Every folder under ``data_dir`` as a temporary view named after it."""
    frames = {}
    for table in sorted(p for p in data_dir.iterdir() if p.is_dir()):
        frames[table.name] = spark.read.parquet(str(table))
        frames[table.name].createOrReplaceTempView(table.name)
    return frames


def session_with_tables(context: dict[str, Any]):
    """The session ``run_on_spark`` runs on: the run's Parquet tables as temporary views."""
    spark = spark_session()
    register_tables(spark, Path(context["params"]["data_dir"]))
    return spark


@dag(
    dag_id="pushdown_optimize_then_spark",
    schedule=None,
    start_date=datetime(2026, 1, 1),
    catchup=False,
    tags=["pushdown", "example"],
    params={
        "sql": Param(EXAMPLE_SQL, type="string", description="The query to optimize and run."),
        "data_dir": Param(
            os.environ.get("PUSHDOWN_EXAMPLE_DATA", "/tmp/pushdown-example"),
            type="string",
            description="Parquet tables, one folder per table; example tables are written here when it is empty.",
        ),
    },
)
def pushdown_optimize_then_spark():
    @task
    def describe_tables(params: dict[str, Any] | None = None) -> dict[str, Any]:
        data_dir = Path(params["data_dir"])
        spark = spark_session()
        if not data_dir.is_dir() or not any(data_dir.iterdir()):
            for name, (schema, rows) in example_rows().items():
                spark.createDataFrame(rows, schema).write.mode("overwrite").parquet(str(data_dir / name))
                log.info("wrote example table %s (%d rows) under %s", name, len(rows), data_dir)
        frames = register_tables(spark, data_dir)
        return {"tables": {name: describe(df) for name, df in frames.items()}}

    PushdownSparkSqlOperator(
        task_id="run_on_spark", sql="{{ params.sql }}", catalog=describe_tables(), spark_session=session_with_tables
    )


pushdown_optimize_then_spark()
