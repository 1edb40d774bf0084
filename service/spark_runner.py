"""The Spark runner, re-exported: its one copy is ``pushdown_client.spark_runner`` (see ``service.client``)."""

from pushdown_client.spark_runner import SparkRun, conform, run_sql, session_catalog, session_settings, wire_type

__all__ = ["SparkRun", "conform", "run_sql", "session_catalog", "session_settings", "wire_type"]
