"""The history read API: recorded optimizations, one in full, and the savings the dashboard draws.

Every route needs the bearer token when one is configured, like ``/optimize``. A store that cannot be
reached answers 503 ``history_unavailable``; recording itself is the ``HistoryRecorder``'s job.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import date
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from api import dashboard
from api.deps import HistoryDep, require_token
from api.overview import overview
from api.responses import ErrorResponse
from service.answer import to_json
from service.errors import InputError
from service.history import Filters, HistoryRecorder, HistoryStore, explain_tree
from service.settings import Settings

logger = logging.getLogger(__name__)

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], tags=["history"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "Missing or wrong bearer token."},
    503: {"model": ErrorResponse, "description": "The history store is off or cannot be reached."},
}
T = TypeVar("T")


async def _read(history: HistoryRecorder, read: Callable[[HistoryStore], T]) -> T:
    """Run a store read off the event loop; a store that is off or down is a 503 with no internals."""
    if history.store is None:
        raise InputError("history_unavailable", "optimization history is disabled (see PUSHDOWN_HISTORY_ENABLED)")
    store = history.store
    try:
        return await run_in_threadpool(read, store)
    except Exception as exc:
        logger.warning("history read failed: %r", exc)
        raise InputError("history_unavailable", f"the history store ({store.backend}) cannot be read") from None


async def _filters(
    pipeline: Annotated[str | None, Query(description="Only this pipeline (the request's context.pipeline).")] = None,
    task: Annotated[str | None, Query(description="Only this task (context.task).")] = None,
    date_from: Annotated[date | None, Query(alias="from", description="First UTC day, inclusive (YYYY-MM-DD).")] = None,
    date_to: Annotated[date | None, Query(alias="to", description="Last UTC day, inclusive (YYYY-MM-DD).")] = None,
) -> Filters:
    return Filters(pipeline=pipeline or None, task=task or None, date_from=date_from, date_to=date_to)


FiltersDep = Annotated[Filters, Depends(_filters)]


@router.get("/optimizations", summary="Recorded optimizations, newest first", responses=_ERRORS)
async def list_optimizations(
    history: HistoryDep,
    filters: FiltersDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> Any:
    items, total = await _read(history, lambda store: _with_overview(store, *store.list(filters, limit, offset)))
    return {"items": items, "total": total, "limit": limit, "offset": offset}


def _with_overview(store: HistoryStore, items: list[dict[str, Any]], total: int) -> tuple[list[dict[str, Any]], int]:
    """Each row with its query (or plan summary) and tables, read from the stored request and answer."""
    out = []
    for item in items:
        record = store.get(str(item["id"])) or {}
        out.append({**item, **overview(record.get("request") or {}, record.get("response") or {})})
    return out, total


@router.get(
    "/optimizations/{record_id}",
    summary="One optimization in full: request, answer, reasons, and the plan trees before and after",
    responses={**_ERRORS, 404: {"model": ErrorResponse, "description": "No such optimization."}},
)
async def get_optimization(record_id: str, history: HistoryDep, request: Request) -> Response:
    record = await _read(history, lambda store: store.get(record_id))
    if record is None:
        raise InputError("not_found", f"no optimization {record_id!r}", "$.id")
    response = record["response"]
    record["origin"] = overview(record.get("request") or {}, response)["origin"]  # sql, plan, substrait, dataframe
    cost = response.get("cost") or {}
    explain = response.get("explain") or {}
    record["trees"] = {
        side: explain_tree(str(explain.get(side) or ""), (cost.get(side) or {}).get("nodes") or [])
        for side in ("before", "after")
    }
    feedback = getattr(request.app.state, "feedback", None)  # estimated against actual rows, when a run reported
    record["feedback"] = await run_in_threadpool(feedback.for_record, record) if feedback is not None else None
    # written as the answer was (service.answer.to_json): a record as deep as the plans the service accepts is
    # past the default encoder's depth limit
    return Response(await run_in_threadpool(to_json, record), media_type="application/json")


@router.get(
    "/savings", summary="Totals and series by day, pipeline and task; top kept and blocked reasons", responses=_ERRORS
)
async def savings(history: HistoryDep, filters: FiltersDep, top: Annotated[int, Query(ge=1, le=100)] = 10) -> Any:
    return await _read(history, lambda store: store.savings(filters, top))


@router.get("/history/status", summary="Whether recording is on, and what was recorded, dropped or lost")
async def history_status(history: HistoryDep) -> dict[str, Any]:
    """Since this process started, and ``totals`` (from the database) since the history began."""
    return await run_in_threadpool(lambda: history.status(totals=True))


def install_history(app: FastAPI, settings: Settings, recorder: HistoryRecorder) -> HistoryRecorder:
    """Give ``app`` the recorder (``app.state.history``), the read API and the dashboard; flush on shutdown."""
    app.state.history = recorder
    app.include_router(router)
    dashboard.install(app)
    previous: Callable[[Any], AbstractAsyncContextManager[Any]] = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app_: Any) -> AsyncIterator[Any]:
        app.state.history.start()  # the writer runs retention even before the first request
        async with previous(app_) as state:
            yield state
        await run_in_threadpool(app.state.history.close, settings.shutdown_grace_s or 10.0)

    app.router.lifespan_context = lifespan
    return recorder
