"""No request waits for a thread it does not need: FastAPI runs a plain ``def`` dependency (or route) on its thread
pool, one hop there and back per request, cache hits included (``get_heavy_pool`` was one until 2026-11-27)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from api.app import create_app
from service.settings import Settings


def _api_routes(routes: list[Any]) -> Iterator[APIRoute]:
    """Every APIRoute, those of included routers too (FastAPI wraps an included router; its own stays whole)."""
    stack = list(routes)
    while stack:
        route = stack.pop()
        if isinstance(route, APIRoute):
            yield route
        elif hasattr(route, "original_router"):
            stack.extend(route.original_router.routes)


def _calls(dependant: Dependant) -> Iterator[object]:
    stack = [dependant]
    while stack:
        current = stack.pop()
        if current.call is not None:
            yield current.call
        stack.extend(current.dependencies)


def _awaited(call: object) -> bool:
    """A coroutine function, or an object whose ``__call__`` is one (security schemes): run on the event loop."""
    return inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(type(call).__call__)


def test_every_route_and_dependency_is_a_coroutine(tmp_path: object) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    routes = list(_api_routes(app.routes))
    assert {"/optimize", "/feedback/{request_id}", "/api/optimizations"} <= {r.path for r in routes}
    plain = sorted(
        {
            f"{route.path}: {getattr(call, '__qualname__', call)}"
            for route in routes
            for call in _calls(route.dependant)
            if not _awaited(call)
        }
    )
    assert plain == [], plain
