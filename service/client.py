"""The service's typed Python client, re-exported: its one copy is the ``pushdown_client`` package.

``pushdown_client`` is a distribution of its own (``pushdown_client/pyproject.toml``) so that callers without the
service (the Airflow provider's environment) can install it; the service ships the same package. Without a URL,
``PushdownClient()`` runs the service in this process (``service.in_process_client``).
"""

from pushdown_client.client import (
    Answer,
    CostJson,
    FunctionSpec,
    Mode,
    PushdownClient,
    PushdownError,
    SparkTargetJson,
    optimize_request,
)

__all__ = [
    "Answer",
    "CostJson",
    "FunctionSpec",
    "Mode",
    "PushdownClient",
    "PushdownError",
    "SparkTargetJson",
    "optimize_request",
]
