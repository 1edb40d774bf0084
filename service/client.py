"""The service's typed Python client: ``pushdown_client``'s, with this process's service as the default transport.

``pushdown_client`` is a distribution of its own (``pushdown_client/pyproject.toml``) so that callers without the
service (the Airflow provider's environment) can install it; it imports nothing of the service. Here a client
without a URL runs the service in this process (``service.in_process_client``)::

    from service.client import PushdownClient, in_process_client

    PushdownClient("http://pushdown:8000", token="...")  # over HTTP, as pushdown_client.PushdownClient
    PushdownClient()                                     # in this process; or in_process_client(settings, spark)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pushdown_client import client as _client
from pushdown_client.client import (
    DEFAULT_TIMEOUT_SECONDS,
    Answer,
    CostJson,
    FunctionSpec,
    Mode,
    PushdownError,
    SparkTargetJson,
    Transport,
    optimize_request,
)
from service.in_process_client import InProcessService

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from service.settings import Settings

__all__ = [
    "Answer",
    "CostJson",
    "FunctionSpec",
    "InProcessService",
    "Mode",
    "PushdownClient",
    "PushdownError",
    "SparkTargetJson",
    "Transport",
    "in_process_client",
    "optimize_request",
]


class PushdownClient(_client.PushdownClient):
    """``pushdown_client.PushdownClient``; without a URL or a transport, the service runs in this process."""

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        transport: Transport | None = None,
        settings: Settings | None = None,
        spark: SparkSession | None = None,
    ) -> None:
        """``settings``/``spark``: in-process only (default: ``Settings()`` from the environment, and a session
        built from ``settings.spark_master`` on the first ``analyze``)."""
        if not url and transport is None:
            transport = InProcessService(settings, spark)
        super().__init__(url, token=token, timeout=timeout, transport=transport)


def in_process_client(settings: Settings | None = None, spark: SparkSession | None = None) -> PushdownClient:
    """A client that runs the service in this process (its stores open on the first call)."""
    return PushdownClient(transport=InProcessService(settings, spark))
