"""A typed Python client for the pushdown service, usable without Airflow and installable without the service.

Against a running service (``url``) it speaks HTTP with the standard library only. Without a URL it calls a
``Transport`` instead: the service provides one that runs its use cases in this process (statistics and history
from the ``PUSHDOWN_*`` settings), so that mode needs the service installed, and this package imports nothing of
it (``service.client.PushdownClient()`` or ``service.client.in_process_client()`` pass it in)::

    from pushdown_client import PushdownClient

    client = PushdownClient("http://pushdown:8000", token="...")   # or service.client.PushdownClient() in-process
    answer = client.optimize("SELECT ... WHERE score(o.note) AND c.region = 'EU'",
                             catalog={"tables": {"orders": {"ref": "orders"}}},
                             functions={"score": {"cost": 2000}})
    answer["cost"]["savings_vs_baseline"], answer["spark"]["sql"]

Every failure is a ``PushdownError`` carrying the service's ``status``, ``code``, ``message`` and ``path``.
``pushdown_client.spark_runner.run_sql`` runs an answer on a SparkSession.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, Protocol, TypedDict

DEFAULT_TIMEOUT_SECONDS = 60.0
Mode = Literal["cost", "always", "never"]


class FunctionSpec(TypedDict, total=False):
    """What a SQL request declares about a function it calls: per-row cost (1 = a comparison)."""

    cost: float
    deterministic: bool
    may_fail: bool


class SparkTargetJson(TypedDict):
    """The answer's ``spark`` object."""

    sql: str
    conf: dict[str, str]
    barriers: list[str]
    left_to_spark: list[str]


class CostJson(TypedDict):
    before: dict[str, Any]
    after: dict[str, Any]
    savings: float
    baseline: NotRequired[dict[str, Any]]
    savings_vs_baseline: NotRequired[float]
    savings_vs_written: NotRequired[float]


class Answer(TypedDict):
    """An ``/optimize`` answer (docs/api.md has every field)."""

    request_id: str
    plan: dict[str, Any]
    decisions: list[dict[str, Any]]
    cost: CostJson
    warnings: list[Any]
    sql: NotRequired[str]
    spark: NotRequired[SparkTargetJson]
    context: NotRequired[dict[str, Any] | None]


class PushdownError(Exception):
    """The service refused or failed a call: HTTP status, error code, message and the JSON path it names."""

    def __init__(self, status: int, code: str, message: str, path: str | None = None) -> None:
        super().__init__(f"pushdown service answered {status} {code}: {message}" + (f" at {path}" if path else ""))
        self.status, self.code, self.message, self.path = status, code, message, path

    @property
    def is_client_error(self) -> bool:
        """A 4xx: the request itself is wrong, so retrying it cannot help."""
        return 400 <= self.status < 500

    @classmethod
    def from_body(cls, status: int, text: str) -> PushdownError:
        """The service's ``{"error", "message", "path"}`` body; anything else (a proxy's page) verbatim."""
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if isinstance(body, dict) and "message" in body:
            return cls(status, str(body.get("error", "error")), str(body["message"]), body.get("path"))
        return cls(status, "http_error", text.strip()[:500] or "(empty body)")


def optimize_request(
    sql: str | None = None,
    *,
    plan: Mapping[str, Any] | None = None,
    catalog: Mapping[str, Any] | None = None,
    functions: Mapping[str, FunctionSpec] | None = None,
    mode: Mode | None = None,
    options: Mapping[str, Any] | None = None,
    context: Mapping[str, str] | None = None,
    dialect: str = "spark",
    detail: Literal["summary", "full"] | None = None,
) -> dict[str, Any]:
    """The ``POST /optimize`` body; ``detail="full"`` asks for the decision matrix, EXPLAIN trees and cost tables.

    >>> optimize_request("SELECT 1", mode="always")
    {'dialect': 'spark', 'sql': 'SELECT 1', 'options': {'mode': 'always'}}
    """
    if (sql is None) == (plan is None):
        raise ValueError("give exactly one of sql and plan")
    body: dict[str, Any] = {"dialect": dialect}
    body.update({"sql": sql} if sql is not None else {"plan": dict(plan or {})})
    if catalog is not None:
        body["catalog"] = dict(catalog)
    if functions:
        body["functions"] = {name: dict(spec) for name, spec in functions.items()}
    opts = {**(options or {}), **({"mode": mode} if mode else {})}
    if opts:
        body["options"] = opts
    if context:
        body["context"] = dict(context)
    if detail is not None:
        body["detail"] = detail
    return body


class Transport(Protocol):
    """What answers a client that has no URL: the same calls as the HTTP API, with its bodies and answers, failing
    with ``PushdownError`` as the API would. ``service.in_process_client.InProcessService`` is the service's own,
    which runs its use cases in the caller's process."""

    def optimize(self, body: dict[str, Any]) -> Any: ...

    def analyze(self, name: str, body: dict[str, Any]) -> dict[str, Any]: ...

    def tables(self) -> list[dict[str, Any]]: ...

    def history(self, pipeline: str | None, task: str | None, limit: int) -> list[dict[str, Any]]: ...

    def health(self) -> dict[str, Any]: ...


class PushdownClient:
    """``optimize``, ``analyze``, ``tables`` and ``history`` against ``url``, or through ``transport`` without one."""

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        transport: Transport | None = None,
    ) -> None:
        """``transport``: what answers instead of a service at ``url`` (give one or the other); the service's
        in-process one is ``service.in_process_client.InProcessService``."""
        if url and transport is not None:
            raise ValueError("give a service URL or a transport, not both")
        self.url = url.rstrip("/") if url else None
        self.token, self.timeout = token, timeout
        self.transport = transport

    # ---- the four calls
    def optimize(self, sql: str | None = None, **kwargs: Any) -> Answer:
        """Where the filters of ``sql`` (or ``plan=``) go; keywords as ``optimize_request``."""
        return self.optimize_body(optimize_request(sql, **kwargs))

    def optimize_body(self, body: Mapping[str, Any]) -> Answer:
        """``POST /optimize`` with a body already built (``optimize_request``'s shape, or a Substrait request)."""
        if self.url is None:
            return self._local().optimize(dict(body))
        return self._http("POST", "/optimize", dict(body))

    def analyze(
        self,
        name: str,
        *,
        path: str | None = None,
        table: str | None = None,
        format: str = "parquet",
        options: Mapping[str, Any] | None = None,
        wait: bool = True,
        poll_seconds: float = 0.5,
    ) -> dict[str, Any]:
        """Collect statistics and a sample of a table (a file ``path`` or a Spark catalog ``table``).

        Waits for the job by default and returns its result; ``wait=False`` returns the job as accepted."""
        body: dict[str, Any] = {"format": format}
        body.update({"path": path} if path is not None else {})
        body.update({"table": table} if table is not None else {})
        if options:
            body["options"] = dict(options)
        if self.url is None:
            return self._local().analyze(name, body)
        accepted = self._http("POST", f"/tables/{urllib.parse.quote(name)}/analyze", body)
        if not wait:
            return accepted
        while True:
            job = self._http("GET", accepted["status_url"])
            if job["state"] == "succeeded":
                return job["result"]
            if job["state"] == "failed":
                raise PushdownError(500, "analyze_failed", str(job.get("error")), f"$.jobs.{job['id']}")
            time.sleep(poll_seconds)

    def tables(self) -> list[dict[str, Any]]:
        """Analyzed tables and their current versions."""
        if self.url is None:
            return self._local().tables()
        return self._http("GET", "/tables")["tables"]

    def history(self, *, pipeline: str | None = None, task: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Recorded optimizations, newest first."""
        if self.url is None:
            return self._local().history(pipeline, task, limit)
        query = urllib.parse.urlencode(
            {k: v for k, v in (("pipeline", pipeline), ("task", task)) if v} | {"limit": limit}
        )
        body = self._http("GET", f"/api/optimizations?{query}")
        return body["items"]

    def feedback(
        self, request_id: str, nodes: list[dict[str, Any]], functions: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """Report the rows a run saw per node of the answer ``request_id`` (``POST /feedback/{request_id}``), and
        what its functions cost per call (``functions``: ``[{"name", "calls", "per_call_s", "unit_s"}]``).

        Only against a service: an in-process client keeps no history to attach them to."""
        if self.url is None:
            raise PushdownError(501, "feedback_unavailable", "feedback needs a service URL (it keeps the history)")
        body: dict[str, Any] = {"nodes": nodes, **({"functions": functions} if functions else {})}
        return self._http("POST", f"/feedback/{urllib.parse.quote(request_id, safe='')}", body)

    def health(self) -> dict[str, Any]:
        """``GET /healthz``: the service's status and version (in-process: this installation's)."""
        if self.url is None:
            return self._local().health()
        return self._http("GET", "/healthz")

    def check_token(self) -> None:
        """Raises ``PushdownError`` (401) unless the service accepts this token (``/openapi.json`` needs one)."""
        if self.url is not None:
            self._http("GET", "/openapi.json")

    # ---- transport
    def _http(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(f"{self.url}{path}", data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 (the caller's URL)
                return json.loads(response.read().decode())
        except urllib.error.HTTPError as exc:
            raise PushdownError.from_body(exc.code, exc.read().decode(errors="replace")) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise PushdownError(503, "unreachable", f"{type(exc).__name__}: {exc}", None) from None

    def _local(self) -> Transport:
        if self.transport is None:
            raise PushdownError(
                501,
                "in_process_unavailable",
                "a client without a URL needs a transport, such as the service running in this process: pass the "
                "service's URL, or install the service (pip install -e . in its repository) and use "
                "service.client.PushdownClient() or service.client.in_process_client()",
            )
        return self.transport
