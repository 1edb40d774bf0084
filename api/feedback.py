"""``POST /feedback/{request_id}``: the rows a run actually saw, per node of the answer's plan.

The body is validated here (shape, non-negative counts, at most ``MAX_NODES`` nodes); the use case checks the
ids against the recorded answer and stores the counts with the history. Errors answer in the service's shape:
404 for an unknown request, 422 with the JSON path for a bad node, 503 when the history is off or down.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api.deps import SettingsDep, read_body, require_token
from api.responses import ErrorResponse
from service.errors import InputError
from service.feedback.use_case import FeedbackService
from service.jsonguard import parse_json
from service.request import validation_error

#: More nodes than any plan the engine accepts would have is a hostile body.
MAX_NODES = 10_000

router = APIRouter(dependencies=[Depends(require_token)], tags=["feedback"])


class FeedbackNode(BaseModel):
    """One node's counts: rows it emitted and, when known, rows it received."""

    model_config = ConfigDict(extra="forbid", strict=True)
    id: str = Field(min_length=1, max_length=200, description="A node id of the answer's plan (`plan`).")
    rows_out: int = Field(ge=0, description="Rows the node emitted in the run.")
    rows_in: int | None = Field(default=None, ge=0, description="Rows it received (optional).")


class FeedbackFunction(BaseModel):
    """What one function cost per call in the run (service/feedback/functions.py)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = Field(min_length=1, max_length=200, description="The function's name as the request's SQL calls it.")
    calls: float = Field(gt=0, description="Calls in the run (the rows of Spark's Python evaluation node).")
    per_call_s: float = Field(ge=0, description="Seconds per call on the executors.")
    unit_s: float = Field(gt=0, description="Seconds of one cost unit (a comparison) on that session.")


class FeedbackRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [{"nodes": [{"id": "n4", "rows_out": 180, "rows_in": 20000}]}]},
    )
    nodes: list[FeedbackNode] = Field(max_length=MAX_NODES)
    functions: list[FeedbackFunction] | None = Field(
        default=None,
        max_length=1000,
        description="Per-call cost of functions Spark evaluated on their own (Python UDFs), for learned costs.",
    )


class FeedbackComparison(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    operator: str | None = None
    estimated_rows: float | None = None
    actual_rows: int
    q_error: float | None = None


class FeedbackResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    request_id: str
    nodes: list[FeedbackComparison]
    observations: int = Field(description="Scans whose observed selectivity the next /optimize can use.")
    function_observations: int | None = Field(
        default=None, description="Function costs stored for learned costs (when the body had `functions`)."
    )


class TaskRun(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    run: str | None = None
    created_at: str | None = None
    nodes: int = Field(description="Nodes with actual rows.")
    max_q_error: float | None = None
    median_q_error: float | None = None


def _inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema with its ``$defs`` inlined: the route documents a body it reads itself."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(item: Any) -> Any:
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return inline(defs[ref.removeprefix("#/$defs/")])
            return {key: inline(value) for key, value in item.items()}
        if isinstance(item, list):
            return [inline(value) for value in item]
        return item

    return inline(schema)


async def get_feedback(request: Request) -> FeedbackService:
    return request.app.state.feedback


def parse_feedback(raw: bytes, max_json_depth: int) -> list[dict[str, Any]]:
    """The body's nodes (``parse_feedback_body`` also gives its functions)."""
    return parse_feedback_body(raw, max_json_depth)[0]


def parse_feedback_body(raw: bytes, max_json_depth: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    try:
        body = FeedbackRequest.model_validate(parse_json(raw, max_json_depth))
    except ValidationError as exc:
        raise validation_error(exc) from None
    functions = None if body.functions is None else [f.model_dump() for f in body.functions]
    return [node.model_dump() for node in body.nodes], functions


@router.post(
    "/feedback/{request_id}",
    summary="Report the rows a run saw per plan node; stored with the request's history, used by the next run",
    response_model=FeedbackResponse,
    responses={
        401: {"model": ErrorResponse, "description": "Missing or wrong bearer token."},
        404: {"model": ErrorResponse, "description": "No optimization with this request id."},
        413: {"model": ErrorResponse, "description": "Body larger than PUSHDOWN_MAX_BODY_BYTES."},
        422: {"model": ErrorResponse, "description": "A node id not in the answer's plan, or a negative count."},
        503: {"model": ErrorResponse, "description": "The history store is off or cannot be reached."},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _inline_schema(FeedbackRequest)}},
        }
    },
)
async def post_feedback(
    request_id: str,
    request: Request,
    settings: SettingsDep,
    feedback: Annotated[FeedbackService, Depends(get_feedback)],
) -> Any:
    raw = await read_body(request, settings.max_body_bytes)
    nodes, functions = await run_in_threadpool(parse_feedback_body, raw, settings.max_json_depth)
    try:
        return await run_in_threadpool(feedback.receive, request_id, nodes, functions)
    except InputError:
        raise
    except Exception as exc:  # the store is down: the caller may retry
        raise InputError("history_unavailable", f"feedback cannot be stored: {type(exc).__name__}") from exc


@router.get(
    "/api/feedback/runs",
    summary="A pipeline task's runs with feedback, oldest first: worst and median q-error of each (the chart)",
    response_model=list[TaskRun],
    tags=["history"],
    responses={503: {"model": ErrorResponse, "description": "The history store is off or cannot be reached."}},
)
async def task_runs(
    feedback: Annotated[FeedbackService, Depends(get_feedback)],
    pipeline: Annotated[str, Query(min_length=1, max_length=500)],
    task: Annotated[str, Query(min_length=1, max_length=500)],
) -> Any:
    try:
        return await run_in_threadpool(feedback.task_series, pipeline, task)
    except InputError:
        raise
    except Exception as exc:
        raise InputError("history_unavailable", f"feedback cannot be read: {type(exc).__name__}") from exc
