"""Every error becomes a JSON body ``{"error", "message", "path", "detail"?}``; none carries a stack trace.

One handler maps the one hierarchy (``costmodel.errors.ServiceError``: the engine's, the service's, the adapters'
errors and the time limit) to HTTP; routes raise, they never build error answers themselves. Starlette's own
errors (404, 405, the bearer check's 401) get the same body shape.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from costmodel.errors import ServiceError

logger = logging.getLogger(__name__)

#: Status per error code; every other ``ServiceError`` has its class's ``status`` (bad input: 422).
STATUS_BY_CODE = {
    "malformed_json": 400,
    "invalid_host": 400,
    "token_in_url": 400,
    "unauthorized": 401,
    "outside_data_roots": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "body_too_large": 413,
    "unsupported_media_type": 415,
    "sql_unavailable": 501,
    "time_limit": 503,
    "statistics_unavailable": 503,
    "history_unavailable": 503,
}
_CODE_BY_STATUS = {status: code for code, status in STATUS_BY_CODE.items()}


def status_of(exc: ServiceError) -> int:
    """The HTTP status of ``exc``: its code's own, else its class's."""
    return STATUS_BY_CODE.get(exc.code, exc.status)


def error_response(exc: ServiceError) -> JSONResponse:
    """The answer for ``exc``: its body, status and headers."""
    return JSONResponse(exc.to_wire(), status_code=status_of(exc), headers=exc.headers or None)


async def _service_error(request: Request, exc: Exception) -> JSONResponse:
    """The one mapping of the error hierarchy to HTTP."""
    assert isinstance(exc, ServiceError)  # registered for ServiceError only
    return error_response(exc)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own errors (404, 405) and the auth check's 401, in the service's shape."""
    assert isinstance(exc, HTTPException)  # registered for HTTPException only
    code = _CODE_BY_STATUS.get(exc.status_code, "http_error")
    body: dict[str, Any] = {"error": code, "message": str(exc.detail), "path": "$"}
    if exc.status_code == 405:  # say what is allowed, in the body as in the Allow header
        allowed = [m.strip() for m in (exc.headers or {}).get("Allow", "").split(",") if m.strip()]
        body["message"] = f"{request.method} is not allowed on {request.url.path}; use {' or '.join(allowed)}"
        body["detail"] = {"method": request.method, "allowed": allowed}
    elif exc.status_code == 404 and exc.detail == "Not Found":  # no route; a route's own 404 says more
        body["message"] = f"no endpoint at {request.url.path} (see /docs for the API)"
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


class LastResortMiddleware:
    """Turns a bug into a 500 ``{"error": "internal"}``, logged with its traceback, the caller told nothing internal.

    A middleware rather than an ``Exception`` handler: Starlette re-raises after such a handler runs, and
    uvicorn then drops the keep-alive connection, so the client's next request on it would fail.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            logger.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:  # half a response is out; only dropping the connection is left
                raise
            body = {"error": "internal", "message": "internal error", "path": "$"}
            await JSONResponse(body, status_code=500)(scope, receive, send)


def install_error_handling(app: FastAPI) -> None:
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_middleware(LastResortMiddleware)
