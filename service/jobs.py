"""Background jobs with state and progress, for work too long for a request (the analyze job).

One worker thread runs jobs in submission order: Spark already uses every core
for one job, and two analyze jobs of the same table must not race. Job state
lives in memory, so it is per process and lost on restart; what a finished job
produced is in the statistics store, which is durable.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

logger = logging.getLogger(__name__)

JobState = Literal["queued", "running", "succeeded", "failed"]
#: Finished jobs remembered for ``GET /jobs/{id}``; the oldest are forgotten first.
MAX_FINISHED_JOBS = 1000
#: Longest error message a job reports; Spark's can carry a whole plan.
MAX_ERROR_CHARS = 2000

#: A job's body: gets a progress callback (stage, rows seen, percent) and returns a JSON-able result.
JobFn = Callable[[Callable[[str, int, float], None]], dict[str, Any]]


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    kind: str
    target: str
    state: JobState = "queued"
    stage: str | None = None
    rows_seen: int = 0
    percent: float = 0.0
    error: str | None = None
    result: dict[str, Any] | None = None
    created_at: str = field(default_factory=_now)
    started_at: str | None = None
    finished_at: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)


#: Spark error conditions whose first line names only paths, tables or formats, never a value read from a file.
_PLAIN_CONDITIONS = (
    "PATH_NOT_FOUND",
    "UNABLE_TO_INFER_SCHEMA",
    "TABLE_OR_VIEW_NOT_FOUND",
    "DATA_SOURCE_NOT_FOUND",
    "FAILED_READ_FILE",
    "CANNOT_READ_FILE_FOOTER",
    "UNSUPPORTED_DATASOURCE_FOR_DIRECT_QUERY",
)


def error_message(exc: BaseException) -> str:
    """A failure as one readable line that never carries file content; the full trace goes to the log.

    Spark's messages can quote what it read (a malformed CSV record, a value that failed a cast), so only
    conditions known to name paths and tables keep their first line; any other Spark error is reported by
    its condition. Our own errors (``ValueError``, ``RuntimeError``) are written for people and kept.

    >>> error_message(ValueError("bad format\\nmore"))
    'bad format'
    """
    condition = _condition(exc)
    first = (str(exc).strip().splitlines() or [""])[0].strip()
    if condition is not None:
        if not condition.startswith(_PLAIN_CONDITIONS):
            first = f"Spark failed with {condition}"
        return f"{first[:MAX_ERROR_CHARS]} (details in the server log)"
    if type(exc).__module__.startswith(("py4j", "pyspark")) or not isinstance(exc, ValueError | RuntimeError):
        return f"{type(exc).__name__} (details in the server log)"
    return first[:MAX_ERROR_CHARS] or type(exc).__name__


def _condition(exc: BaseException) -> str | None:
    """Spark's error condition (``PATH_NOT_FOUND``), if ``exc`` is a Spark error that has one."""
    get = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    if get is None:
        return None
    try:
        return str(get() or "") or type(exc).__name__
    except Exception:  # the JVM side is gone
        return type(exc).__name__


class JobRunner:
    """Runs submitted jobs one at a time on a worker thread and keeps their state."""

    def __init__(self) -> None:
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pushdown-job")

    def submit(self, kind: str, target: str, fn: JobFn) -> Job:
        job = Job(id=uuid.uuid4().hex, kind=kind, target=target)
        with self._lock:
            self._jobs[job.id] = job
            self._forget_old()
        self._pool.submit(self._run, job.id, fn)
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def jobs(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def shutdown(self, wait: bool = False) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=True)

    def _update(self, job_id: str, **changes: Any) -> None:
        with self._lock:
            self._jobs[job_id] = replace(self._jobs[job_id], **changes)

    def _run(self, job_id: str, fn: JobFn) -> None:
        self._update(job_id, state="running", started_at=_now())

        def progress(stage: str, rows_seen: int, percent: float) -> None:
            self._update(job_id, stage=stage, rows_seen=rows_seen, percent=percent)

        try:
            result = fn(progress)
        except Exception as exc:
            logger.exception("job %s failed", job_id)
            self._update(job_id, state="failed", error=error_message(exc), finished_at=_now())
        else:
            self._update(job_id, state="succeeded", percent=100.0, result=result, finished_at=_now())

    def _forget_old(self) -> None:
        finished = [j.id for j in self._jobs.values() if j.state in ("succeeded", "failed")]
        for job_id in finished[: max(0, len(finished) - MAX_FINISHED_JOBS)]:
            del self._jobs[job_id]
