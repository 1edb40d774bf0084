"""Prometheus metrics: what the service did, scraped from ``GET /metrics`` in the text exposition format.

With ``pushdown serve --workers N`` every worker is a process of its own; the command
line then sets ``PROMETHEUS_MULTIPROC_DIR`` before any worker starts, prometheus-client
keeps each process's values in files there, and a scrape of any worker adds them up.
The metrics are module-level, as prometheus-client expects: one set per process, shared
by every app in it (tests build several apps in one process).
"""

from __future__ import annotations

import collections
import os
from collections.abc import Iterable
from typing import Any

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

#: Seconds; /optimize answers in milliseconds, an analyze request in tens of milliseconds, a slow one in seconds.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = Counter(
    "pushdown_http_requests_total", "HTTP requests answered, by route template, method and status.",
    ("route", "method", "status"),
)  # fmt: skip
LATENCY = Histogram(
    "pushdown_http_request_duration_seconds", "Time from request to the end of the answer, by route and status.",
    ("route", "method", "status"), buckets=LATENCY_BUCKETS,
)  # fmt: skip
ERRORS = Counter(
    "pushdown_errors_total", "Error answers by their error code (unknown_column, body_too_large, internal, ...).",
    ("error", "status"),
)  # fmt: skip
DECISIONS = Counter(
    "pushdown_decisions_total", "Decisions in /optimize answers, by outcome (pushed, kept, blocked) and reason.",
    ("action", "reason"),
)  # fmt: skip
HISTORY_QUEUE = Gauge(
    "pushdown_history_queue_depth", "Answers waiting for the history writer.", multiprocess_mode="livesum"
)
HISTORY_LOST = Gauge(
    "pushdown_history_lost", "Answers the history dropped (queue full) or failed to write, since start.",
    ("kind",), multiprocess_mode="livesum",
)  # fmt: skip
#: Every worker reads the same shared job table, so workers agree: the most recent scrape's value, not a sum.
ANALYZE_JOBS = Gauge(
    "pushdown_analyze_jobs", "Analyze jobs known to the service, by state.", ("state",), multiprocess_mode="mostrecent"
)
JOB_STATES = ("queued", "running", "succeeded", "failed")

router = APIRouter()


def observe_request(route: str, method: str, status: int, seconds: float, error: str | None) -> None:
    labels = (route, method, str(status))
    REQUESTS.labels(*labels).inc()
    LATENCY.labels(*labels).observe(seconds)
    if error is not None:
        ERRORS.labels(error, str(status)).inc()


def observe_decisions(decisions: Iterable[dict[str, Any]]) -> None:
    """Counted per (action, reason) first: one increment per label set, not one per decision (an answer has
    dozens of decisions, and each increment locks and, with several workers, writes a shared file)."""
    counts = collections.Counter((str(d.get("action")), str(d.get("reason"))) for d in decisions)
    for (action, reason), count in counts.items():
        DECISIONS.labels(action, reason).inc(count)


def observe_state(app_state: Any) -> None:
    """The history queue (this process's) and the analyze jobs (the shared job table) as they are now (gauges);
    read at scrape time only, since both read a database. With several workers each history gauge holds the value
    its worker had when it last answered a scrape."""
    history = getattr(app_state, "history", None)
    if history is not None:
        status = history.status()  # memory only (no totals): cheap enough for every request
        HISTORY_QUEUE.set(status.get("queued", 0))
        for kind in ("dropped", "failed"):
            HISTORY_LOST.labels(kind).set(status.get(kind, 0))
    jobs = getattr(app_state, "jobs", None)
    if jobs is not None:
        counts = dict.fromkeys(JOB_STATES, 0) | jobs.states.counts()
        for state, count in counts.items():
            ANALYZE_JOBS.labels(state).set(count)


def exposition() -> bytes:
    """Every metric in the text format; across all worker processes when they share a multiprocess directory."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=directory)
        return generate_latest(registry)
    return generate_latest()


@router.get(
    "/metrics",
    summary="Prometheus metrics in the text exposition format",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Metrics in the Prometheus text format."}},
)
async def metrics(request: Request) -> Response:
    observe_state(request.app.state)
    return Response(exposition(), media_type=CONTENT_TYPE_LATEST)
