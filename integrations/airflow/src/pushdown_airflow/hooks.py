"""``PushdownHook``: the pushdown service's HTTP API behind an Airflow connection of type ``pushdown``.

A connection names the service and its token, e.g. from the environment::

    AIRFLOW_CONN_PUSHDOWN_DEFAULT='pushdown://:my-token@pushdown:8000'
    AIRFLOW_CONN_PUSHDOWN_DEFAULT='{"conn_type": "pushdown", "host": "pushdown", "port": 8000, "password": "my-token"}'

Host and port say where the service listens; the schema field picks ``https`` (default ``http``); the password is
the bearer token (``PUSHDOWN_API_TOKEN`` on the service), left empty when the service has none.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from airflow.providers.http.hooks.http import HttpHook
from airflow.sdk.exceptions import AirflowException
from requests import Request, Response, Session

DEFAULT_TIMEOUT_SECONDS = 60.0


class PushdownServiceError(AirflowException):
    """The service answered with an error: its status, error code, message and the JSON path it points at."""

    def __init__(self, status: int, code: str, message: str, path: str | None = None) -> None:
        where = f" at {path}" if path else ""
        super().__init__(f"pushdown service answered {status} {code}: {message}{where}")
        self.status = status
        self.code = code
        self.message = message
        self.path = path

    @property
    def is_client_error(self) -> bool:
        """A 4xx: the request itself is wrong, so retrying it cannot help."""
        return 400 <= self.status < 500

    @classmethod
    def from_body(cls, status: int, text: str) -> PushdownServiceError:
        """Reads the service's ``{"error", "message", "path"}`` body; anything else (a proxy's page) verbatim."""
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if isinstance(body, dict) and "message" in body:
            return cls(status, str(body.get("error", "error")), str(body["message"]), body.get("path"))
        return cls(status, "http_error", text.strip()[:500] or "(empty body)")


def service_url(host: str | None, port: int | None, schema: str | None) -> str:
    """The service's base URL from a connection's fields; a host that already has a scheme is kept as it is."""
    if not host:
        raise AirflowException("the pushdown connection has no host: set it to where the service listens")
    base = host if "://" in host else f"{schema or 'http'}://{host}"
    if port:
        base = f"{base}:{port}"
    return base.rstrip("/")


def auth_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class PushdownHook(HttpHook):
    """Calls ``POST /optimize`` and ``GET /healthz`` through ``HttpHook``'s session, with the token as a bearer."""

    conn_name_attr = "pushdown_conn_id"
    default_conn_name = "pushdown_default"
    conn_type = "pushdown"
    hook_name = "Pushdown"

    def __init__(self, pushdown_conn_id: str = default_conn_name, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        super().__init__(method="POST", http_conn_id=pushdown_conn_id)
        self.pushdown_conn_id = pushdown_conn_id
        self.timeout = timeout

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """How the connection form reads in Airflow's UI."""
        return {
            "hidden-fields": ["login"],  # extra stays: TLS verification, proxies, headers (HttpHook reads them)
            "relabeling": {"password": "API token", "schema": "Scheme"},
            "placeholders": {"host": "pushdown", "port": "8000", "schema": "http", "password": "PUSHDOWN_API_TOKEN"},
        }

    def _set_base_url(self, connection: Any) -> None:
        super()._set_base_url(connection)
        self.base_url = service_url(connection.host, connection.port, connection.schema)

    def _configure_session_from_auth(self, session: Session, connection: Any) -> Session:
        """The token travels as a bearer header, not as HttpHook's basic auth."""
        session.headers.update(auth_headers(connection.password))
        return session

    def _request(self, method: str, endpoint: str, payload: dict[str, Any] | None = None) -> Response:
        session = self.get_conn()
        request = session.prepare_request(Request(method, self.url_from_endpoint(endpoint), json=payload))
        return self.run_and_check(session, request, {"check_response": False, "timeout": self.timeout})

    def _json(self, response: Response) -> dict[str, Any]:
        if response.status_code >= 400:
            raise PushdownServiceError.from_body(response.status_code, response.text)
        return response.json()

    def optimize(self, request: dict[str, Any]) -> dict[str, Any]:
        """Posts one ``/optimize`` request; returns the answer, or raises ``PushdownServiceError``."""
        return self._json(self._request("POST", "/optimize", request))

    def health(self) -> dict[str, Any]:
        return self._json(self._request("GET", "/healthz"))

    def test_connection(self) -> tuple[bool, str]:
        """The UI's "Test" button: reachable, and the token accepted (``/openapi.json`` needs it)."""
        try:
            version = self.health().get("version", "?")
            self._json(self._request("GET", "/openapi.json"))
        except Exception as exc:  # the button shows any failure as text
            return False, str(exc)
        return True, f"pushdown service {version} is up and accepts the token"

    @classmethod
    async def optimize_async(
        cls, conn_id: str, request: dict[str, Any], timeout: float = DEFAULT_TIMEOUT_SECONDS
    ) -> dict[str, Any]:
        """``optimize`` for the triggerer's event loop (aiohttp, the connection read asynchronously)."""
        connection = await cls.aget_connection(conn_id)
        url = service_url(connection.host, connection.port, connection.schema) + "/optimize"
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.post(url, json=request, headers=auth_headers(connection.password)) as response,
        ):
            text = await response.text()
            if response.status >= 400:
                raise PushdownServiceError.from_body(response.status, text)
            return json.loads(text)
