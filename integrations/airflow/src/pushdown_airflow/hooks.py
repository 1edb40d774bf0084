"""``PushdownHook``: the pushdown service behind an Airflow connection of type ``pushdown``, through its client.

A connection names the service and its token, e.g. from the environment::

    AIRFLOW_CONN_PUSHDOWN_DEFAULT='pushdown://:my-token@pushdown:8000'
    AIRFLOW_CONN_PUSHDOWN_DEFAULT='{"conn_type": "pushdown", "host": "pushdown", "port": 8000, "password": "my-token"}'

Host and port say where the service listens; the schema field picks ``https`` (default ``http``); the password is
the bearer token (``PUSHDOWN_API_TOKEN`` on the service), left empty when the service has none. The hook turns the
connection into the service's own typed client (``pushdown_client.PushdownClient``): the HTTP calls, the error
type and the Spark runner are the client's, not a copy.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowException

from pushdown_client import PushdownClient, PushdownError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from pushdown_client.dataframe import DataFrameRun
    from pushdown_client.spark_runner import SparkRun

DEFAULT_TIMEOUT_SECONDS = 60.0

#: The service refused or failed a call (status, code, message, JSON path); a 4xx ``is_client_error``. Network
#: failures are a 503 ``unreachable``. The provider's earlier name for the client's ``PushdownError``.
PushdownServiceError = PushdownError


def service_url(host: str | None, port: int | None, schema: str | None) -> str:
    """The service's base URL from a connection's fields; a host that already has a scheme is kept as it is.

    >>> service_url("pushdown", 8000, None), service_url("https://pd.example.com", None, "http")
    ('http://pushdown:8000', 'https://pd.example.com')
    """
    if not host:
        raise AirflowException("the pushdown connection has no host: set it to where the service listens")
    base = host if "://" in host else f"{schema or 'http'}://{host}"
    if port:
        base = f"{base}:{port}"
    return base.rstrip("/")


def client_for(connection: Any, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> PushdownClient:
    """The service's client for an Airflow connection: its URL, and its password as the bearer token."""
    url = service_url(connection.host, connection.port, connection.schema)
    return PushdownClient(url, token=connection.password or None, timeout=timeout)


class PushdownHook(BaseHook):
    """``get_conn()`` is a ``PushdownClient`` for the connection; ``optimize`` and ``health`` call it."""

    conn_name_attr = "pushdown_conn_id"
    default_conn_name = "pushdown_default"
    conn_type = "pushdown"
    hook_name = "Pushdown"

    def __init__(self, pushdown_conn_id: str = default_conn_name, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        super().__init__()
        self.pushdown_conn_id = pushdown_conn_id
        self.timeout = timeout

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """How the connection form reads in Airflow's UI."""
        return {
            "hidden-fields": ["login", "extra"],
            "relabeling": {"password": "API token", "schema": "Scheme"},
            "placeholders": {"host": "pushdown", "port": "8000", "schema": "http", "password": "PUSHDOWN_API_TOKEN"},
        }

    def get_conn(self) -> PushdownClient:
        return client_for(self.get_connection(self.pushdown_conn_id), self.timeout)

    def optimize(self, request: dict[str, Any]) -> dict[str, Any]:
        """Posts one ``/optimize`` body; returns the answer, or raises ``PushdownError``."""
        return dict(self.get_conn().optimize_body(request))

    def run_sql(self, spark: SparkSession, sql: str, **kwargs: Any) -> SparkRun:
        """``pushdown_client.spark_runner.run_sql`` with this connection's client (keywords as there).

        Each action of the returned run sends Spark's actual rows back to the service (``feedback=False`` turns it
        off); ``run.actual`` waits for that send, which a task should do before it ends.
        """
        from pushdown_client.spark_runner import run_sql

        return run_sql(spark, sql, client=self.get_conn(), **kwargs)

    def run_dataframe(self, df: DataFrame, **kwargs: Any) -> DataFrameRun:
        """``pushdown_client.dataframe.run_dataframe`` with this connection's client (keywords as there).

        As ``run_sql``: each action sends Spark's actual rows back (``feedback=False`` turns it off), and
        ``run.actual`` waits for that send.
        """
        from pushdown_client.dataframe import run_dataframe

        return run_dataframe(df, client=self.get_conn(), **kwargs)

    def health(self) -> dict[str, Any]:
        return self.get_conn().health()

    def test_connection(self) -> tuple[bool, str]:
        """The UI's "Test" button: reachable, and the token accepted."""
        try:
            client = self.get_conn()
            version = client.health().get("version", "?")
            client.check_token()
        except Exception as exc:  # the button shows any failure as text
            return False, str(exc)
        return True, f"pushdown service {version} is up and accepts the token"

    @classmethod
    async def optimize_async(
        cls, conn_id: str, request: dict[str, Any], timeout: float = DEFAULT_TIMEOUT_SECONDS
    ) -> dict[str, Any]:
        """``optimize`` for the triggerer's event loop: the connection read asynchronously, the call in a thread."""
        client = client_for(await cls.aget_connection(conn_id), timeout)
        return dict(await asyncio.to_thread(client.optimize_body, request))
