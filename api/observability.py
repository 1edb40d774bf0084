"""Request ids, metrics and one access log line per request, as the outermost middleware.

A request's id is the caller's ``X-Request-ID`` when it is a sensible token (1-128 of
letters, digits and ``._:-``), else a new UUID. It goes back in the ``X-Request-ID``
header of every answer and is in every log line written while the request is served
(``request_id_var``, read by the log formatter in ``service.logs``). In ``/optimize``'s
answer a made-up id is the ``request_id`` (the history's key); a caller's own id is
``client_request_id`` beside a fresh ``request_id``, since callers reuse ids.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid

from fastapi import Depends, FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api import metrics
from service.logs import request_id_var

REQUEST_ID_HEADER = "x-request-id"
_SAFE_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
#: Error bodies are small; larger ones are not read for their code.
_MAX_ERROR_BODY = 64 * 1024

access_log = logging.getLogger("pushdown.access")


def request_id_from(header: str | None) -> str:
    """The caller's id when it is safe to log and echo, else a new one.

    >>> request_id_from("job-42.attempt:1")
    'job-42.attempt:1'
    >>> len(request_id_from("no spaces please"))
    36
    """
    if header is not None and _SAFE_ID.match(header):
        return header
    return str(uuid.uuid4())


def _route_of(scope: Scope) -> str:
    """The route's template (``/tables/{name}``), so label values stay few; ``unmatched`` for 404s."""
    route = scope.get("route")
    return getattr(route, "path", None) or "unmatched"


def _error_code(body: bytes) -> str | None:
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return value.get("error") if isinstance(value, dict) and isinstance(value.get("error"), str) else None


class ObservabilityMiddleware:
    """Sets the request id, and when the answer is done: counts and times it, logs it, counts its error code."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        raw = headers.get(REQUEST_ID_HEADER.encode())
        request_id = request_id_from(raw.decode("latin-1") if raw is not None else None)
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["request_id_from_caller"] = raw is not None and raw.decode("latin-1") == request_id
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status = 500
        error_body = bytearray()
        recorded = False

        def record() -> None:
            """Count, time and log the request once; called before its last byte leaves, so a client that has
            the answer also finds it in /metrics and the log."""
            nonlocal recorded
            if recorded:
                return
            recorded = True
            elapsed = time.perf_counter() - started
            route = _route_of(scope)
            error = (_error_code(bytes(error_body)) or "http_error") if status >= 400 else None
            metrics.observe_request(route, scope.get("method", ""), status, elapsed, error)
            access_log.info(
                "%s %s %s %.1f ms",
                scope.get("method"),
                scope.get("path"),
                status,
                elapsed * 1000,
                extra={
                    "method": scope.get("method"),
                    "path": scope.get("path"),
                    "route": route,
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 3),
                    **({"error": error} if error else {}),
                },
            )

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [
                    *(h for h in message.get("headers", []) if h[0].lower() != REQUEST_ID_HEADER.encode()),
                    (REQUEST_ID_HEADER.encode(), request_id.encode()),
                ]
            elif message["type"] == "http.response.body":
                if status >= 400 and len(error_body) < _MAX_ERROR_BODY:
                    error_body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    record()
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            record()  # a request that ended without a complete answer (a dropped connection, a crash mid-body)
            request_id_var.reset(token)


def install_observability(app: FastAPI) -> None:
    """Outermost middleware (add it last), and the /metrics route."""
    from api.deps import require_token

    app.include_router(metrics.router, dependencies=[Depends(require_token)])
    app.add_middleware(ObservabilityMiddleware)
