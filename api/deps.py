"""FastAPI dependencies: settings and the use case come from the app that serves the request, not globals.

The getters are ``async``: FastAPI runs a plain ``def`` dependency on its thread pool, a thread hop per
dependency per request for an attribute read.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from functools import partial
from typing import Annotated

from fastapi import Depends, HTTPException, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service.analyze import Analyzer
from service.bounded import BoundedRunner
from service.errors import InputError
from service.history import HistoryRecorder
from service.jobs import JobRunner
from service.jsonguard import check_depth
from service.optimize import OptimizeInput, OptimizeService
from service.request import INLINE_PARSE_BYTES, check_sql_length, parse_ordinary_request, parse_within_limits
from service.request_weight import check_weight, request_weight
from service.settings import Settings
from service.worker_pool import HeavyTask, WorkerPool

_bearer = HTTPBearer(auto_error=False, description="Required when PUSHDOWN_API_TOKEN is set.")
#: The dashboard's session cookie (HttpOnly, SameSite=Strict), set by POST /dashboard/login.
SESSION_COOKIE = "pushdown_session"
#: Methods a session cookie authenticates: reads only, so no cross-site write can ride on it.
_COOKIE_METHODS = frozenset({"GET", "HEAD"})


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_optimizer(request: Request) -> OptimizeService:
    return request.app.state.optimizer


SettingsDep = Annotated[Settings, Depends(get_settings)]
OptimizerDep = Annotated[OptimizeService, Depends(get_optimizer)]


async def get_analyzer(request: Request) -> Analyzer:
    """The analyze use case; 503 when the configured statistics store is not available."""
    analyzer = request.app.state.analyzer
    if analyzer is None:
        raise InputError("statistics_unavailable", "the statistics store is not configured (see PUSHDOWN_DATABASE_URL)")
    return analyzer


async def get_jobs(request: Request) -> JobRunner:
    return request.app.state.jobs


AnalyzerDep = Annotated[Analyzer, Depends(get_analyzer)]
JobsDep = Annotated[JobRunner, Depends(get_jobs)]


async def get_history(request: Request) -> HistoryRecorder:
    """The optimization history recorder (its ``store`` is None when recording is off)."""
    return request.app.state.history


HistoryDep = Annotated[HistoryRecorder, Depends(get_history)]


def session_value(token: str) -> str:
    """The cookie a signed-in dashboard holds: derived from the token, so it is not the token itself,
    and changing the token signs every browser out."""
    return hmac.new(token.encode(), b"pushdown dashboard session v1", hashlib.sha256).hexdigest()


def token_matches(given: str, expected: str) -> bool:
    return secrets.compare_digest(given.encode(), expected.encode())


async def require_token(
    request: Request,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
) -> None:
    """401 unless auth is off, the request carries ``Authorization: Bearer <api_token>``, or (reads only)
    the dashboard's session cookie."""
    expected = settings.api_token
    if expected is None:
        return
    if credentials is not None and token_matches(credentials.credentials, expected):
        return
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie and request.method in _COOKIE_METHODS and token_matches(cookie, session_value(expected)):
        return
    raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})


async def get_runner(request: Request) -> BoundedRunner:
    return request.app.state.runner


RunnerDep = Annotated[BoundedRunner, Depends(get_runner)]


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to exceed ``limit``: by its header or while streaming."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise InputError("body_too_large", f"body is {declared} bytes, the limit is {limit}", "$", {"limit": limit})
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise InputError("body_too_large", f"body exceeds the limit of {limit} bytes", "$", {"limit": limit})
    return bytes(body)


async def get_heavy_pool(request: Request) -> WorkerPool | None:
    """The worker processes for heavy requests; None when they are off (``PUSHDOWN_HEAVY_WORKERS=0``)."""
    pool: WorkerPool | None = request.app.state.heavy_pool
    return pool


HeavyPoolDep = Annotated[WorkerPool | None, Depends(get_heavy_pool)]


async def optimize_input(
    request: Request, settings: SettingsDep, runner: RunnerDep, pool: HeavyPoolDep, optimizer: OptimizerDep
) -> OptimizeInput | HeavyTask:
    """The request body, size-checked, weighed, depth-checked, parsed and validated; parsing runs off the event
    loop, within the request's time limit, which starts once the body is in (``request.state.deadline``).

    A request too heavy to finish in time is refused at once (``check_weight``). A heavy one is not parsed here:
    it comes back as a ``HeavyTask`` for a worker process, which parses and answers it away from the event loop.
    """
    raw = await read_body(request, settings.max_body_bytes)
    request.state.raw_body = raw  # the request as sent, for the optimization history
    request.state.deadline = deadline = runner.deadline()
    large = len(raw) >= settings.heavy_body_bytes
    # a small body is weighed in well under a millisecond; a large one on a thread, a slice at a time
    weight = await runner.run(request_weight, raw, deadline=deadline) if large else request_weight(raw)
    check_weight(weight, settings.max_request_weight, runner.limit_s)
    limits = (settings.max_json_depth, settings.max_sql_chars)
    if pool is not None and (large or weight >= settings.heavy_request_weight) and pool.started():
        if not large:  # a few milliseconds for a body this size; refused here, it needs no worker process
            await runner.run(check_depth, raw, settings.max_json_depth, deadline=deadline)
        return HeavyTask(raw, *limits, runner.limit_s, (None, None), deadline)  # the route sets the ids
    # ordinary JSON of ordinary size parses in well under a millisecond: on the event loop, no worker thread
    body = (
        optimizer.read_body(raw, partial(parse_ordinary_request, max_json_depth=settings.max_json_depth))
        if len(raw) <= INLINE_PARSE_BYTES
        else None
    )
    if body is None:
        return await runner.run(parse_within_limits, raw, *limits, deadline=deadline)
    check_sql_length(body, settings.max_sql_chars)
    return body
