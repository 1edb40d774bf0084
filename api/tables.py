"""Routes for analyzed tables and their jobs: start an analyze job, follow it, read what is known.

The body is read here and validated by the service's schema (``service.request``), not by FastAPI's own
validation, so that a bad request gets the service's error shape with a JSON path, like ``/optimize``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlparse

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from api.deps import AnalyzerDep, JobsDep, SettingsDep, read_body, require_token
from api.responses import ErrorResponse
from service.analyze import Analyzer
from service.dataroots import check_reader_options, check_table_name, resolve_source
from service.errors import InputError
from service.jobs import Job
from service.request import AnalyzeBody, parse_analyze_body
from service.statistics import check_name

router = APIRouter(dependencies=[Depends(require_token)], tags=["tables"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "Missing or wrong bearer token."},
    403: {"model": ErrorResponse, "description": "The path is outside PUSHDOWN_DATA_ROOTS (present or not)."},
    404: {"model": ErrorResponse, "description": "No such table, version or job."},
    422: {"model": ErrorResponse, "description": "Invalid body or table name; `path` says where."},
    503: {"model": ErrorResponse, "description": "The statistics store is not configured."},
}


class JobAccepted(BaseModel):
    job_id: str
    status_url: str


class JobStatus(BaseModel):
    id: str
    kind: str
    target: str
    state: Literal["queued", "running", "succeeded", "failed"]
    stage: str | None = Field(description="read, statistics, sample, mcv, containers, write, commit, done.")
    rows_seen: int
    percent: float
    error: str | None = Field(description="Why the job failed (no stack trace).")
    result: dict[str, Any] | None = Field(description="On success: table, version, row_count, sample_rows.")
    created_at: str
    started_at: str | None
    finished_at: str | None


class TableSummary(BaseModel):
    name: str
    version: int
    row_count: int | None
    analyzed_at: str
    source: dict[str, Any] | None


class TableList(BaseModel):
    tables: list[TableSummary]


def _checked_source(body: AnalyzeBody, roots: list[str]) -> str | None:
    """The resolved path under a data root (403 otherwise), or None for a catalog table; see service.dataroots."""
    check_reader_options(body.reader_options)
    if body.path is None:
        check_table_name(body.table or "")
        return None
    resolved = resolve_source(body.path, roots)
    # Under a root, existence is no secret: refuse a missing path now rather than queue a job that must fail.
    if urlparse(resolved).scheme in ("", "file") and not Path(resolved).exists():
        raise InputError("path_not_found", f"no file or directory at {body.path}", "$.path", {"path": body.path})
    return resolved


@router.post(
    "/tables/{name}/analyze",
    status_code=202,
    response_model=JobAccepted,
    summary="Start an analyze job: statistics, containers and a sample of a table",
    responses=_ERRORS,
)
async def analyze(
    name: str, request: Request, settings: SettingsDep, analyzer: AnalyzerDep, jobs: JobsDep
) -> dict[str, str]:
    check_name(name, "$.name")
    raw = await read_body(request, settings.max_body_bytes)
    body = await run_in_threadpool(parse_analyze_body, raw, settings.max_json_depth)
    source = await run_in_threadpool(_checked_source, body, settings.data_roots)
    job = await run_in_threadpool(jobs.submit, "analyze", name, analyzer.job(body.to_request(name, settings, source)))
    return {"job_id": job.id, "status_url": f"/jobs/{job.id}"}


@router.get("/jobs/{job_id}", response_model=JobStatus, summary="A job's state and progress", responses=_ERRORS)
async def job_status(job_id: str, jobs: JobsDep) -> dict[str, Any]:
    job: Job | None = await run_in_threadpool(jobs.get, job_id)
    if job is None:
        raise InputError("not_found", f"no job {job_id!r}", "$.job_id")
    return job.to_wire()


@router.get(
    "/tables", response_model=TableList, summary="Analyzed tables and their current versions", responses=_ERRORS
)
async def list_tables(analyzer: AnalyzerDep) -> dict[str, Any]:
    tables = await run_in_threadpool(analyzer.store.tables)
    return {"tables": [t.summary() for t in tables]}


@router.get(
    "/tables/{name}",
    summary="A table's stored statistics (current or a given version), without the sample",
    responses=_ERRORS,
)
async def get_table(
    name: str, analyzer: AnalyzerDep, version: Annotated[str | None, Query(description="A version >= 1.")] = None
) -> dict[str, Any]:
    if version is not None and not (version.isdigit() and int(version) >= 1):
        raise InputError("invalid_version", "version must be an integer >= 1", "$.version")
    return await run_in_threadpool(_table_body, analyzer, name, None if version is None else int(version))


def _table_body(analyzer: Analyzer, name: str, version: int | None) -> dict[str, Any]:
    store = analyzer.store
    stored = store.get(name, version)
    if stored is None:
        if version is not None and store.get(name) is not None:
            versions = store.versions(name)
            raise InputError(
                "not_found", f"table {name!r} has no version {version}", "$.version", {"versions": versions}
            )
        names = store.names()
        raise InputError("not_found", f"no analyzed table {name!r}", "$.name", {"tables": names})
    return {**stored.summary(), "versions": store.versions(name), "statistics": stored.stats}
