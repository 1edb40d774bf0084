"""Run a plan (original or rewritten) on Spark as a PySpark DataFrame.

An orchestrator that got a rewritten plan from ``POST /optimize`` can run it
directly::

    from pyspark.sql import SparkSession
    from service.spark_plan import register_tables, to_dataframe

    spark = SparkSession.builder.getOrCreate()
    register_tables(spark, {"cities": "/data/cities.parquet", "states": "/data/states.parquet"})
    answer = httpx.post(f"{base}/optimize", json=request).json()
    rows = to_dataframe(spark, answer["plan"], request.get("catalog")).collect()

The plan goes through the Spark SQL renderer (``service.sql.plan_to_sql``),
whose output is checked on Spark by the TPC-H and differential tests, so a
filter lands exactly where the plan puts it: a filtered subquery under a join,
a WHERE on a table for a scan's ``filters``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from service.sql import plan_to_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def register_tables(spark: SparkSession, paths: Mapping[str, str], file_format: str = "parquet") -> None:
    """Register each ``name -> path`` as a temporary view the plans' scans can read."""
    for name, path in paths.items():
        spark.read.format(file_format).load(path).createOrReplaceTempView(name)


def to_sql(plan: Mapping[str, Any], catalog: Mapping[str, Any] | None = None) -> str:
    """The Spark SQL that runs ``plan``."""
    return plan_to_sql(dict(plan), "spark", catalog=dict(catalog) if catalog is not None else None)


def to_dataframe(spark: SparkSession, plan: Mapping[str, Any], catalog: Mapping[str, Any] | None = None) -> DataFrame:
    """``plan`` as a DataFrame over the session's registered tables (lazy: nothing runs until an action)."""
    return spark.sql(to_sql(plan, catalog))
