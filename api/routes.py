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
from api.models import ErrorResponse, Health, OptimizeResponse
from service import __version__
from service.history import HISTORY_HEADER
from service.jsonguard import dumps_answer, number_overflow
from service.optimize import OptimizeInput, OptimizeService
from service.worker_pool import HeavyTask

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
        answer, payload, recorded = heavy.answer, heavy.payload, heavy.request
    else:
        # the request's context (its id, for log lines) goes along into the worker thread
        context = contextvars.copy_context()
        answer, payload = await runner.run(context.run, _answer, optimizer, body, ids, deadline=request.state.deadline)
        recorded = body
    observe_decisions(answer.get("decisions", ()))
    response = Response(payload, media_type="application/json")
    # Recorded before the answer leaves (or queued, by settings); never raises. The header says which.
    elapsed_ms = (time.perf_counter() - started) * 1000
    outcome = await history.record(recorded, answer, payload, elapsed_ms, getattr(request.state, "raw_body", None))
    response.headers[HISTORY_HEADER] = outcome
    return response


def _answer_ids(request: Request) -> tuple[str | None, str | None]:
    """(the answer's own id, the caller's X-Request-ID): the same id when the service made it up.

    A caller's id is not the answer's: callers reuse ids (retries), and the history keeps one answer per id.
    """
    request_id: str = request.state.request_id
    if getattr(request.state, "request_id_from_caller", False):
        return None, request_id
    return request_id, None


def _answer(
    optimizer: OptimizeService, body: OptimizeInput, ids: tuple[str | None, str | None]
) -> tuple[dict[str, Any], bytes]:
    """The answer and its JSON; a cost that overflowed to infinity is the request's fault (422 with a path)."""
    request = {"plan": body.plan, "catalog": body.catalog, "options": body.options, "substrait": body.substrait}
    try:
        answer = optimizer.optimize(body, *ids)
    except OverflowError:
        raise number_overflow(request) from None
    return answer, dumps_answer(answer, request)


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
