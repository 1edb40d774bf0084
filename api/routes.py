"""Thin routes: the dependencies validate, the use case decides, the error handlers answer failures."""

from __future__ import annotations

import contextvars
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import fastapi_offline
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

from api.deps import HeavyPoolDep, HistoryDep, OptimizerDep, RunnerDep, optimize_input, require_token
from api.metrics import observe_decisions
from api.responses import ErrorResponse, Health, OptimizeResponse
from service import __version__
from service.history import HISTORY_HEADER, Outcome
from service.optimize import OptimizeInput, answer_body
from service.worker_pool import HeavyTask

#: The response header that says whether the answer came from the request cache: hit, miss, bypass or off.
CACHE_HEADER = "Pushdown-Cache"

#: Open to everyone, so load balancers can probe without the token.
open_router = APIRouter()
#: Everything else needs the bearer token when one is configured.
router = APIRouter(dependencies=[Depends(require_token)])

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Malformed JSON (detail has line and column)."},
    401: {"model": ErrorResponse, "description": "Missing or wrong bearer token."},
    413: {"model": ErrorResponse, "description": "Body larger than PUSHDOWN_MAX_BODY_BYTES."},
    415: {"model": ErrorResponse, "description": "The body is not `application/json`."},
    422: {"model": ErrorResponse, "description": "Invalid request, plan, catalog, options or SQL; `path` says where."},
    501: {"model": ErrorResponse, "description": "SQL input is not available in this build."},
    503: {"model": ErrorResponse, "description": "Longer than PUSHDOWN_REQUEST_TIME_LIMIT_S (`time_limit`)."},
}
#: Swagger UI's files in the fastapi-offline package (a maintained copy of swagger-ui-dist).
SWAGGER_DIR = Path(fastapi_offline.__file__).parent / "static"
SWAGGER_ASSETS = frozenset({"swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"})
_REQUEST_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OptimizeRequest"}}},
    }
}


@open_router.get("/healthz", response_model=Health, summary="Liveness probe; never needs a token")
async def healthz() -> dict[str, str]:
    return {"status": "ok", "version": __version__}


@router.post(
    "/optimize",
    summary="Decide where each filter goes and return the rewritten plan",
    responses={200: {"model": OptimizeResponse, "description": "Decisions, costs and the rewritten plan."}, **_ERRORS},
    openapi_extra=_REQUEST_BODY,
)
async def optimize(
    request: Request,
    body: Annotated[OptimizeInput | HeavyTask, Depends(optimize_input)],
    optimizer: OptimizerDep,
    history: HistoryDep,
    runner: RunnerDep,
    pool: HeavyPoolDep,
) -> Response:
    started = time.perf_counter()
    # CPU-bound, so off the event loop (/healthz keeps answering) and within the request's time limit.
    ids = _answer_ids(request)
    recorded: OptimizeInput | dict[str, Any]  # the request as the history keeps it
    if isinstance(body, HeavyTask):  # a heavy body: parsed and answered in a worker process
        assert pool is not None  # noqa: S101 - optimize_input makes a HeavyTask only with a pool
        heavy = await pool.run(replace(body, ids=ids))
        answered, recorded = heavy.answered(), heavy.request
    else:
        # the request's context (its id, for log lines) goes along into the worker thread
        context = contextvars.copy_context()
        use_cache = not _no_cache(request.headers.get("cache-control"))
        # a hit costs a lookup (about 0.1 ms): answered on the event loop, without a worker thread
        hit = optimizer.cached(body, *ids) if use_cache else None
        # the history records the full answer: then it is made in the worker thread, not on the event loop
        full = history.enabled
        answered = (
            hit
            if hit is not None
            else await runner.run(
                context.run, answer_body, optimizer, body, ids, use_cache, full, deadline=request.state.deadline
            )
        )
        recorded = body
    observe_decisions(answered.brief.get("decisions", ()))
    response = Response(answered.payload, media_type="application/json")
    response.headers[CACHE_HEADER] = answered.cache
    # Recorded before the answer leaves (or queued, by settings); never raises. The header says which.
    # The history keeps the full answer whatever detail the caller asked for (the drill-down renders it).
    elapsed_ms = (time.perf_counter() - started) * 1000
    raw = getattr(request.state, "raw_body", None)
    outcome = (
        await history.record(recorded, answered.answer, answered.record, elapsed_ms, raw)
        if history.enabled
        else Outcome.OFF
    )
    response.headers[HISTORY_HEADER] = outcome
    return response


def _no_cache(value: str | None) -> bool:
    """``Cache-Control: no-cache`` or ``no-store`` on the request: compute the answer afresh."""
    if not value:
        return False
    return any(part.strip().lower() in ("no-cache", "no-store") for part in value.split(","))


def _answer_ids(request: Request) -> tuple[str | None, str | None]:
    """(the answer's own id, the caller's X-Request-ID): the same id when the service made it up.

    A caller's id is not the answer's: callers reuse ids (retries), and the history keeps one answer per id.
    """
    request_id: str = request.state.request_id
    if getattr(request.state, "request_id_from_caller", False):
        return None, request_id
    return request_id, None


@router.get("/openapi.json", include_in_schema=False)
async def openapi(request: Request) -> JSONResponse:
    return JSONResponse(request.app.openapi())


@router.get("/docs", include_in_schema=False)
async def docs(request: Request) -> HTMLResponse:
    """Swagger UI from the service's own assets: it renders with no internet access."""
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title=f"{request.app.title} - docs",
        swagger_js_url="/docs/assets/swagger-ui-bundle.js",
        swagger_css_url="/docs/assets/swagger-ui.css",
        swagger_favicon_url="/docs/assets/favicon.png",
    )


@open_router.get("/docs/assets/{name}", include_in_schema=False)
async def docs_asset(name: str) -> FileResponse:
    """Swagger UI's script, stylesheet and icon, as the fastapi-offline package ships them; public files."""
    if name not in SWAGGER_ASSETS:
        raise HTTPException(404, f"no docs asset {name}")
    return FileResponse(SWAGGER_DIR / name, headers={"Cache-Control": "public, max-age=86400"})
