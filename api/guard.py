"""HTTP hygiene in front of every route: Host names, JSON-only POST bodies, no tokens in URLs, no CORS by default.

A web page the operator visits can make the browser send requests to the service on 127.0.0.1. A form post
cannot carry ``Content-Type: application/json`` (a page that sets it needs a CORS preflight, which this
service never grants unless configured), so POST bodies must be JSON (415 otherwise). A DNS-rebound name
reaches 127.0.0.1 with a foreign ``Host``, so a loopback-bound service accepts only loopback names (400).
A ``?token=`` would land in access logs and browser history, so it is refused (400) and redacted from logs.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from api.errors import error_response
from service.errors import InputError
from service.hosts import LOOPBACK_NAMES, is_loopback
from service.settings import Settings

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_TOKEN_IN_QUERY = re.compile(r"(?i)(^|[?&])((?:access_)?token|api_token)=[^&\s\"]*")


def host_name(header: str) -> str:
    """The name in a Host header, without port or IPv6 brackets: ``[::1]:8000`` -> ``::1``.

    >>> host_name("[::1]:8000"), host_name("Example.org:80")
    ('::1', 'example.org')
    """
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def allowed_host_names(settings: Settings) -> frozenset[str] | None:
    """Host names to accept; None accepts any (bound beyond loopback with no ``allowed_hosts`` set)."""
    extra = {host_name(name) for name in settings.allowed_hosts}
    if is_loopback(settings.host):
        return LOOPBACK_NAMES | extra
    return frozenset(extra) or None


def _refuse(code: str, message: str) -> JSONResponse:
    """A refusal before any route runs (no exception handler reaches this far out): the one mapping still."""
    return error_response(InputError(code, message))


class HygieneMiddleware:
    """Refuses foreign Host names (400), non-JSON bodies (415) and tokens in URLs (400) before any route runs."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] | None) -> None:
        self.app = app
        self.allowed_hosts = None if allowed_hosts is None else frozenset(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._check(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _check(self, scope: Scope) -> JSONResponse | None:
        headers = Headers(scope=scope)
        if self.allowed_hosts is not None:
            name = host_name(headers.get("host", ""))
            if name not in self.allowed_hosts:
                return _refuse("invalid_host", "this Host is not served here (see PUSHDOWN_ALLOWED_HOSTS)")
        if _TOKEN_IN_QUERY.search(scope.get("query_string", b"").decode("latin-1")):
            return _refuse("token_in_url", "send the token in the Authorization header (or sign in), never in a URL")
        if scope["method"] in _BODY_METHODS:
            media_type = headers.get("content-type", "").split(";")[0].strip().lower()
            if media_type != "application/json":
                return _refuse("unsupported_media_type", "the body must be JSON (Content-Type: application/json)")
        return None


class RedactTokens(logging.Filter):
    """Keeps tokens out of the access log, should a client put one in a URL anyway."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                _TOKEN_IN_QUERY.sub(r"\1\2=[redacted]", arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


def install_hygiene(app: FastAPI, settings: Settings) -> None:
    """The hygiene middleware, CORS only for configured origins, and the access log's token filter."""
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
    app.add_middleware(HygieneMiddleware, allowed_hosts=allowed_host_names(settings))
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactTokens) for f in access.filters):
        access.addFilter(RedactTokens())
