"""Airflow 3 provider for the pushdown service: ``PushdownHook``, ``PushdownOptimizeOperator`` and its trigger,
``PushdownSparkSqlOperator`` (optimize, then run on Spark with the client's runner) and
``PushdownSparkDataFrameOperator`` (the same for a DataFrame a callable builds)."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

PACKAGE_NAME = "airflow-provider-pushdown"
INTEGRATION = "Pushdown"


def get_provider_info() -> dict[str, Any]:
    """What Airflow's providers manager reads through the ``apache_airflow_provider`` entry point."""
    return {
        "package-name": PACKAGE_NAME,
        "name": "Pushdown",
        "description": "Cost-based filter pushdown: optimize SQL or plans with the pushdown service.",
        "versions": [__version__],
        "integrations": [{"integration-name": INTEGRATION, "tags": ["service"]}],
        "hooks": [{"integration-name": INTEGRATION, "python-modules": ["pushdown_airflow.hooks"]}],
        "operators": [
            {
                "integration-name": INTEGRATION,
                "python-modules": [
                    "pushdown_airflow.operators",
                    "pushdown_airflow.spark_sql",
                    "pushdown_airflow.spark_dataframe",
                ],
            }
        ],
        "triggers": [{"integration-name": INTEGRATION, "python-modules": ["pushdown_airflow.triggers"]}],
        "connection-types": [
            {"hook-class-name": "pushdown_airflow.hooks.PushdownHook", "connection-type": "pushdown"},
        ],
    }
