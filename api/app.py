"""The app factory. Run it with ``pushdown serve`` or ``uvicorn --factory api.app:create_app``."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool
from fastapi.openapi.utils import get_openapi

from api import feedback, routes, tables
from api.errors import install_error_handling
from api.guard import install_hygiene
from api.history import install_history
from api.observability import install_observability
from api.shutdown import install_graceful_shutdown
from service import __version__
from service.assembly import analyzer, assemble, job_states
from service.bounded import BoundedRunner
from service.jobs import JobRunner
from service.request import OptimizeRequest
from service.settings import Settings
from service.worker_pool import WorkerPool

DESCRIPTION = """Decides, per filter and per operator, whether moving the filter below the operator is legal
and worth it under the benefit model `1 - r <= p * r1`, and returns the rewritten plan, the decision log
and per-node cost tables before and after."""


def create_app(settings: Settings | None = None) -> FastAPI:
    """A new app with its own settings and use case; nothing is shared between two apps."""
    settings = settings or Settings()
    app = FastAPI(
        title="Pushdown decision service",
        version=__version__,
        description=DESCRIPTION,
        # Served by routes.router instead, so the token guards them like every other route.
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.settings = settings
    services = assemble(settings)  # statistics store, history, feedback, request cache (service.assembly)
    app.state.optimizer = services.optimizer
    app.state.feedback = services.feedback  # /feedback, and estimates learned from it
    app.state.analyzer = analyzer(services)
    app.state.jobs = JobRunner(job_states(settings))
    app.state.runner = BoundedRunner(settings.request_time_limit_s, settings.max_concurrent_work)
    app.state.heavy_pool = WorkerPool(settings, settings.heavy_workers) if settings.heavy_workers else None
    install_error_handling(app)
    install_hygiene(app, settings)
    app.include_router(routes.open_router)
    app.include_router(routes.router)
    app.include_router(tables.router)
    assert services.history is not None  # noqa: S101 - assembled with the history
    install_history(app, settings, services.history)  # /api/optimizations, /api/savings, /dashboard
    app.include_router(feedback.router)
    _stop_background_work_at_shutdown(app)  # queued analyze jobs, the analyze Spark session
    install_graceful_shutdown(app, settings.shutdown_grace_s)  # SIGTERM: finish within the grace period
    install_observability(app)  # last: the outermost middleware (request id, metrics, access log), /metrics
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _stop_background_work_at_shutdown(app: FastAPI) -> None:
    """At startup: the heavy-request workers if asked. At shutdown: stop them, cancel queued analyze jobs and stop
    the analyze Spark session (a running job then fails)."""
    previous: Callable[[Any], AbstractAsyncContextManager[Any]] = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app_: Any) -> AsyncIterator[Any]:
        if app.state.heavy_pool is not None and app.state.settings.prestart_heavy_workers:
            app.state.heavy_pool.warm()
        await run_in_threadpool(app.state.jobs.fail_abandoned)  # analyze jobs a killed process left running
        async with previous(app_) as state:
            # Started: what exists now (modules, the app) lives as long as the process. Frozen, the collector
            # stops scanning it on every full collection, a pause that grew with the heap (issue 19's p99).
            gc.collect()
            gc.freeze()
            yield state
        if app.state.heavy_pool is not None:
            app.state.heavy_pool.close()
        app.state.jobs.shutdown(wait=False)
        if getattr(app.state.optimizer, "cache", None) is not None:
            app.state.optimizer.cache.close()
        if app.state.analyzer is not None:
            await run_in_threadpool(app.state.analyzer.close)

    app.router.lifespan_context = lifespan


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema plus the request body model, which the route reads itself rather than declaring."""
    if app.openapi_schema is None:
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        request_schema = OptimizeRequest.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, sub in request_schema.pop("$defs", {}).items():
            components.setdefault(name, sub)
        components["OptimizeRequest"] = request_schema
        app.openapi_schema = schema
    return app.openapi_schema
