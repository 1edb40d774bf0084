"""The Spark runner, re-exported: its one copy is ``pushdown_client.spark_runner`` (see ``service.client``).

``run_sql`` without a client asks this process's service (``service.client.PushdownClient()``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pushdown_client import client as _client
from pushdown_client import spark_runner as _runner
from pushdown_client.spark_runner import SparkRun, conform, session_catalog, session_settings, wire_type
from service.client import FunctionSpec, PushdownClient

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SparkRun", "conform", "run_sql", "session_catalog", "session_settings", "wire_type"]


def run_sql(
    spark: SparkSession,
    sql: str,
    *,
    client: _client.PushdownClient | None = None,
    catalog: Mapping[str, Any] | None = None,
    functions: Mapping[str, FunctionSpec] | None = None,
    options: Mapping[str, Any] | None = None,
    context: Mapping[str, str] | None = None,
    feedback: bool = True,
    detect: bool | str = True,
    min_time_saved_s: float = _runner.MIN_TIME_SAVED_S,
) -> SparkRun:
    """``pushdown_client.spark_runner.run_sql``; without a client, the service in this process answers."""
    return _runner.run_sql(
        spark,
        sql,
        client=client or PushdownClient(),
        catalog=catalog,
        functions=functions,
        options=options,
        context=context,
        feedback=feedback,
        detect=detect,
        min_time_saved_s=min_time_saved_s,
    )
