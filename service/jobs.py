"""Background jobs with state and progress, for work too long for a request (the analyze job).

One worker thread per process runs the jobs that process accepted, in submission order: Spark already uses
every core for one job. Job state goes to a ``JobStates``: the service's database (``service.job_store``), so
that with several workers or replicas on one database any of them answers ``GET /jobs/{id}``, or memory (per
process, lost on restart) where there is no database. What a finished job produced is in the statistics store.
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
from typing import Any, Literal, Protocol

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


class JobStates(Protocol):
    """Where job state lives; ``JobRunner`` writes each change through, any process may read."""

    def add(self, job: Job) -> None: ...

    def update(self, job_id: str, **changes: Any) -> None: ...

    def get(self, job_id: str) -> Job | None: ...

    def jobs(self) -> list[Job]: ...

    def counts(self) -> dict[str, int]: ...

    def fail_abandoned(self) -> list[Job]:
        """Mark failed, with the reason, the unfinished jobs whose process is gone; returns them."""
        ...


class MemoryJobStates:
    """Job state in this process only (no database configured, and tests)."""

    def __init__(self) -> None:
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, job: Job) -> None:
        with self._lock:
            self._jobs[job.id] = job
            finished = [j.id for j in self._jobs.values() if j.state in ("succeeded", "failed")]
            for job_id in finished[: max(0, len(finished) - MAX_FINISHED_JOBS)]:
                del self._jobs[job_id]

    def update(self, job_id: str, **changes: Any) -> None:
        with self._lock:
            if job_id in self._jobs:
                self._jobs[job_id] = replace(self._jobs[job_id], **changes)

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def jobs(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for job in self.jobs():
            counts[job.state] = counts.get(job.state, 0) + 1
        return counts

    def fail_abandoned(self) -> list[Job]:
        """Nothing to do: memory does not outlive its process."""
        return []


#: What a job that never ran reports when its service stopped first.
STOPPED_BEFORE_START = "the service stopped before the job started; submit it again"


class JobRunner:
    """Runs the jobs submitted here one at a time on a worker thread; their state goes to ``states``."""

    def __init__(self, states: JobStates | None = None) -> None:
        self.states: JobStates = states if states is not None else MemoryJobStates()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pushdown-job")
        self._queued: set[str] = set()
        self._lock = threading.Lock()

    def submit(self, kind: str, target: str, fn: JobFn) -> Job:
        job = Job(id=uuid.uuid4().hex, kind=kind, target=target)
        self.states.add(job)
        with self._lock:
            self._queued.add(job.id)
        self._pool.submit(self._run, job.id, fn)
        return job

    def get(self, job_id: str) -> Job | None:
        return self.states.get(job_id)

    def fail_abandoned(self) -> list[Job]:
        """At start-up: jobs a killed process left ``queued``/``running`` are marked failed with the reason."""
        try:
            abandoned = self.states.fail_abandoned()
        except Exception:  # a start-up without its database still serves; GET /jobs shows the old state
            logger.exception("could not check for jobs a stopped process left unfinished")
            return []
        for job in abandoned:
            logger.warning("analyze job %s (%s) marked failed: %s", job.id, job.target, job.error)
        return abandoned

    def jobs(self) -> list[Job]:
        return self.states.jobs()

    def shutdown(self, wait: bool = False) -> None:
        """Stop taking jobs; the ones still queued here are cancelled and marked failed (a running one ends
        on its own, and reports how)."""
        self._pool.shutdown(wait=wait, cancel_futures=True)
        with self._lock:
            never_started, self._queued = set(self._queued), set()
        for job_id in never_started:
            try:
                self.states.update(job_id, state="failed", error=STOPPED_BEFORE_START, finished_at=_now())
            except Exception:  # the database is gone too: the job stays queued there
                logger.exception("could not mark job %s as stopped", job_id)

    def _run(self, job_id: str, fn: JobFn) -> None:
        with self._lock:
            self._queued.discard(job_id)
        self.states.update(job_id, state="running", started_at=_now())

        def progress(stage: str, rows_seen: int, percent: float) -> None:
            self.states.update(job_id, stage=stage, rows_seen=rows_seen, percent=percent)

        try:
            result = fn(progress)
        except Exception as exc:
            logger.exception("job %s failed", job_id)
            self.states.update(job_id, state="failed", error=error_message(exc), finished_at=_now())
        else:
            self.states.update(job_id, state="succeeded", percent=100.0, result=result, finished_at=_now())
